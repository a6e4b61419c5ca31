package app

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// An outage is one line when it begins and one when it ends, however the
// round trips begun before a change and ended after it interleave: as the
// database goes, round trips begun before it went still succeed beside
// those that fail, and as it comes back, ones begun while it was down
// still fail.
func TestAnOutageIsOneLineWhenItBeginsAndOneWhenItEnds(t *testing.T) {
	var logged bytes.Buffer
	var ticks time.Duration
	now := func() time.Time { ticks += time.Millisecond; return time.Unix(0, 0).Add(ticks) }
	o := &outage{log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo})), clock: now}
	gone := errors.New("connection refused")

	beforeOutage := now()
	o.reached(beforeOutage)
	o.failed(now(), gone) // the outage begins
	for range 5 {
		o.reached(beforeOutage) // begun before it: older news
		o.failed(beforeOutage, gone)
	}
	assert.True(t, o.isDown())

	duringOutage := now()
	o.reached(now()) // the database is back
	for range 5 {
		o.failed(duringOutage, gone) // begun while it was down: older news
		o.reached(duringOutage)
	}
	assert.False(t, o.isDown())

	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if assert.Len(t, lines, 2, logged.String()) {
		assert.Contains(t, lines[0], "level=ERROR msg=\"the database is unreachable")
		assert.Contains(t, lines[1], "level=WARN msg=\"the database is reachable again\"")
	}

	o.failed(now(), gone) // a second outage is logged again
	assert.True(t, o.isDown())
	assert.Equal(t, 3, strings.Count(strings.TrimSpace(logged.String()), "\n")+1)
}

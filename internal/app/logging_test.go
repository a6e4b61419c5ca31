package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogLinesCarryTheRequestID(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(requestIDs{slog.NewJSONHandler(&out, nil)}).With("component", "graphql")
	ctx := context.WithValue(context.Background(), requestIDKey{}, "0123456789abcdef")
	log.ErrorContext(ctx, "internal error", "error", "boom")
	log.InfoContext(context.Background(), "no request")

	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	var first, second map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &first))
	require.NoError(t, json.Unmarshal(lines[1], &second))
	assert.Equal(t, "0123456789abcdef", first["request_id"])
	assert.Equal(t, "graphql", first["component"])
	assert.NotContains(t, second, "request_id")
}

func TestAccessLevels(t *testing.T) {
	for _, c := range []struct {
		status  int
		elapsed time.Duration
		stream  bool
		want    slog.Level
	}{
		{200, time.Millisecond, false, slog.LevelDebug},
		{200, 2 * time.Second, false, slog.LevelWarn},
		{101, time.Hour, true, slog.LevelDebug},
		{404, time.Millisecond, false, slog.LevelInfo},
		{429, time.Millisecond, false, slog.LevelDebug},
		{413, 2 * time.Second, false, slog.LevelWarn},
		{503, time.Millisecond, false, slog.LevelError},
		{500, time.Hour, true, slog.LevelError},
	} {
		assert.Equal(t, c.want, accessLevel(c.status, c.elapsed, time.Second, c.stream), "%+v", c)
	}
}

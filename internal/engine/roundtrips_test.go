package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/dbhook"
	"sessiongraph/internal/engine"
)

// statementLog records the round trips the pool makes for the engine, one
// line per round trip: a statement, or a batch's statements joined by " ; ".
type statementLog struct {
	mu    sync.Mutex
	lines []string
	on    bool
}

type loggedKey struct{}

func (l *statementLog) wrap(c *app.Config) {
	c.RoundTripHook = func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
		return run(context.WithValue(ctx, loggedKey{}, true))
	}
	c.RoundTrips = func(ctx context.Context, rt dbhook.RoundTrip) {
		if ctx.Value(loggedKey{}) == nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.on {
			l.lines = append(l.lines, strings.Join(rt.Statements, " ; "))
		}
	}
}

func (l *statementLog) record(f func()) []string {
	l.mu.Lock()
	l.lines, l.on = nil, true
	l.mu.Unlock()
	f()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.lines
}

// TestRecordReadOfTwentyRecordsIsBatched proves a read costs the same
// handful of round trips whatever the number of records and FKs: no
// statement per record.
func TestRecordReadOfTwentyRecordsIsBatched(t *testing.T) {
	var log statementLog
	s := apitest.New(t, log.wrap)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "batch"})
	require.NoError(t, err)
	id := opened.Session.ID
	_, err = s.Engine.Turns.BeginTurn(ctx, id, "plan my week")
	require.NoError(t, err)

	read := func(n int) []string {
		records := make([]map[string]any, n)
		for i := range records {
			records[i] = map[string]any{"id": uuid.NewString(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": uuid.NewString()}
		}
		return log.record(func() {
			_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("meal_plans"), Records: records})
			require.NoError(t, err)
		})
	}
	read(1) // warm the domain cache
	twenty := read(20)
	hundred := read(100)
	t.Logf("recordRead of 20 records with 20 new FK targets:\n%s", strings.Join(twenty, "\n"))
	// Two pgx batches: BEGIN, the lock and the known refs; the upsert, the
	// session with its event and COMMIT.
	assert.Len(t, twenty, 2, "round trips for 20 records")
	assert.Equal(t, len(twenty), len(hundred), "the count does not grow with the records")
	// The refs are upserted by one statement whose text does not depend on
	// their count either, so that the driver prepares it once and
	// PostgreSQL plans it once.
	upsert := func(lines []string) string {
		for _, l := range lines {
			if strings.Contains(l, "INSERT INTO refs") {
				for _, text := range strings.Split(l, " ; ") {
					if strings.Contains(text, "INSERT INTO refs") {
						return text
					}
				}
			}
		}
		return ""
	}
	require.NotEmpty(t, upsert(twenty), "the refs' upsert")
	assert.Equal(t, upsert(twenty), upsert(hundred), "the same statement for 20 and for 100 refs")
}

// TestEndTurnReadsEachTurnOnce proves ending a turn costs a fixed handful of
// round trips: the turn two before (whose summary is compressed) is read
// with the open one, and the updated turn is not read back.
func TestEndTurnReadsEachTurnOnce(t *testing.T) {
	var log statementLog
	s := apitest.New(t, log.wrap)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "end"})
	require.NoError(t, err)
	id := opened.Session.ID
	var third []string
	for i := 1; i <= 3; i++ {
		_, err = s.Engine.Turns.BeginTurn(ctx, id, "plan my week")
		require.NoError(t, err)
		third = log.record(func() {
			_, err := s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "Done."})
			require.NoError(t, err)
		})
	}
	t.Logf("endTurn of turn 3:\n%s", strings.Join(third, "\n"))
	// Three round trips: BEGIN with the session lock (one batch); the open
	// and compressed turns read with the promoted artifacts cleared; the
	// turn's update, the session's with its event, and COMMIT (one batch).
	// In statements it was 11: the turn was read back after its update,
	// and the turn two before was read on its own; then 9, with the turn's
	// generated refs read for every message, where only one that shows
	// generated content needs them; then 8, with the event a statement of
	// its own; then 7, with the clearing a statement of its own; then 6.
	assert.Len(t, third, 3, "round trips for endTurn: no read-back of the turn, one statement reads both turns and clears, the event with the session")
}

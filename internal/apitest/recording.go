package apitest

import (
	"context"
	"strings"
	"sync"

	"sessiongraph/internal/app"
	"sessiongraph/internal/dbhook"
)

// Statement is one statement sent for ent or a store's write, with the
// arguments it was sent with.
type Statement struct {
	Query string
	Args  []any
}

// Recorder keeps the statements a server sends for ent and for the store's
// writes while it is on, with their arguments, so that a test can EXPLAIN
// exactly what a request ran (graph/plans_test.go). BEGIN, COMMIT and
// ROLLBACK are left out.
type Recorder struct {
	mu    sync.Mutex
	on    bool
	taken []Statement
}

// Recording returns a configure function for New, Replica or NewGrown that
// records through r, beside the round-trip count (whose mark it reads).
func Recording(r *Recorder) func(*app.Config) {
	return func(c *app.Config) {
		inner := c.RoundTrips
		c.RoundTrips = func(ctx context.Context, rt dbhook.RoundTrip) {
			if inner != nil {
				inner(ctx, rt)
			}
			if ctx.Value(countedKey{}) == nil {
				return // not for ent nor a write: the event hub's
			}
			for i, q := range rt.Statements {
				switch strings.ToLower(strings.TrimSpace(q)) {
				case "begin", "commit", "rollback":
					continue
				}
				r.add(q, rt.Args[i])
			}
		}
	}
}

// Record runs do and returns the statements sent meanwhile.
func (r *Recorder) Record(do func()) []Statement {
	r.mu.Lock()
	r.on, r.taken = true, nil
	r.mu.Unlock()
	do()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.taken
}

func (r *Recorder) add(query string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on {
		return
	}
	r.taken = append(r.taken, Statement{Query: query, Args: append([]any(nil), args...)})
}

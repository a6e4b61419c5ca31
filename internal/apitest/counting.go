package apitest

import (
	"context"
	"sync/atomic"

	"sessiongraph/internal/app"
	"sessiongraph/internal/dbhook"
)

type countedKey struct{}

// countRoundTrips makes n count the round trips the server's pool makes
// for ent's statements and the store's exchanges (a pgx tracer counts
// them: a statement, BEGIN, COMMIT and ROLLBACK are one each, and so is a
// batch sent together); the event hub's own reads are not counted.
func countRoundTrips(c *app.Config, n *atomic.Int64) {
	c.RoundTripHook = func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
		return run(context.WithValue(ctx, countedKey{}, n))
	}
	c.RoundTrips = func(ctx context.Context, _ dbhook.RoundTrip) {
		if n, ok := ctx.Value(countedKey{}).(*atomic.Int64); ok {
			n.Add(1)
		}
	}
}

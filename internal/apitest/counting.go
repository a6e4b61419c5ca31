package apitest

import (
	"context"
	"sync/atomic"

	"entgo.io/ent/dialect"

	"sessiongraph/internal/dbhook"
)

// countRoundTrips wraps d so that n counts the round trips ent sends
// (statements, BEGIN and COMMIT; a ROLLBACK only undoes) without formatting
// them, so that counting costs nothing measurable.
func countRoundTrips(d dialect.Driver, n *atomic.Int64) dialect.Driver {
	return dbhook.Wrap(d, func(ctx context.Context, kind dbhook.Kind, _ string, run func(context.Context) error) error {
		if kind != dbhook.Rollback {
			n.Add(1)
		}
		return run(ctx)
	})
}

package apitest

import (
	"context"
	"sync/atomic"

	"entgo.io/ent/dialect"

	"sessiongraph/internal/dbhook"
	"sessiongraph/internal/pipedb"
)

// countRoundTrips wraps d so that n counts the round trips the pool makes
// for ent (internal/pipedb counts them, without formatting anything): a
// statement is one; a BEGIN costs none of its own, since it goes with the
// transaction's first statement, and a COMMIT none when the write's last
// statement carries it; a COMMIT or ROLLBACK sent alone is one.
func countRoundTrips(d dialect.Driver, n *atomic.Int64) dialect.Driver {
	return dbhook.Wrap(d, func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
		return run(pipedb.CountRoundTrips(ctx, n))
	})
}

// Package grown loads a grown database: the skew of a real deployment, many
// short sessions and a few long-running ones holding most of the turns,
// refs and events (grown.sql says how many), for the plan test, the
// benchmarks and make load to measure on more than fresh fixtures.
package grown

import (
	"context"
	"database/sql"
	_ "embed" // grown.sql
	"fmt"
)

// SQL loads the grown rows into a migrated database, in one transaction.
//
//go:embed grown.sql
var SQL string

// Tenant is the tenant of the long sessions (and of half the short ones).
const Tenant = "acme"

// Long and Short are the turn counts of the two kinds of session.
const (
	Long  = 10000
	Short = 3
)

// Load runs SQL on db (sent without arguments, so as one simple query: one
// transaction) and then gathers statistics, as autovacuum would have.
func Load(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, SQL); err != nil {
		return fmt.Errorf("load grown database: %w", err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		return fmt.Errorf("analyze grown database: %w", err)
	}
	return nil
}

package app

import (
	"context"
	"database/sql"
	"fmt"

	"sessiongraph/internal/store"
)

// holdConns bounds the pool of horizon holds: one per write that spans
// shards while it runs (docs/scale-out.md).
const holdConns = 8

// holdHorizonOnCitus gives the store a pool of horizon holds when the
// database is a Citus coordinator, and returns that pool (nil elsewhere).
// The citus extension must exist when the replica starts: one started
// before it was created runs without holds until restarted.
func holdHorizonOnCitus(ctx context.Context, cfg Config, db *sql.DB, st *store.Store) (*sql.DB, error) {
	on, err := store.OnCitus(ctx, db)
	if err != nil || !on {
		return nil, err
	}
	holds, err := sql.Open("pgx", cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("open the pool of horizon holds: %w", err)
	}
	holds.SetMaxOpenConns(holdConns)
	st.HoldHorizonWith(store.HorizonHold(holds))
	cfg.Logger.Info("Citus coordinator: writes that span shards hold the feed's horizon until every worker has committed")
	return holds, nil
}

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

// horizonHoldsOnCitus opens a pool of horizon holds when the database is a
// Citus coordinator, and returns that pool with the store option that
// takes its holds (nil and none elsewhere). The citus extension must exist
// when the replica starts: one started before it was created runs without
// holds until restarted.
func horizonHoldsOnCitus(ctx context.Context, cfg Config, db *sql.DB) (*sql.DB, []store.Option, error) {
	on, err := store.OnCitus(ctx, db)
	if err != nil || !on {
		return nil, nil, err
	}
	holds, err := sql.Open("pgx", cfg.DatabaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("open the pool of horizon holds: %w", err)
	}
	holds.SetMaxOpenConns(holdConns)
	cfg.Logger.Info("Citus coordinator: writes that span shards hold the feed's horizon until every worker has committed")
	return holds, []store.Option{store.HoldHorizon(store.HorizonHold(holds))}, nil
}

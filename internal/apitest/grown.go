package apitest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	_ "embed" // grown.sql
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/app"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// GrownSQL loads a grown database into a migrated one: 8,000 short sessions
// and 4 long ones holding most of the rows, half a million rows in all
// (grown.sql says what each session holds).
//
//go:embed grown.sql
var GrownSQL string

// GrownTenant is the tenant of the grown database's long sessions (and of
// half its short ones).
const GrownTenant = "acme"

// Grown is a server on a clone of the grown database, and a session of each
// kind in it.
type Grown struct {
	*Server
	// Short is a session of 3 turns and 6 refs; Long one of 10,000 turns
	// and 30,000 refs.
	Short, Long uuid.UUID
}

// NewGrown starts a server on a fresh clone of the grown database. The
// grown template is loaded and ANALYZEd once per PostgreSQL server (and
// again when the migrations or grown.sql change); each clone copies its
// rows and its statistics.
func NewGrown(t testing.TB, configure ...func(*app.Config)) *Grown {
	t.Helper()
	sum := sha256.Sum256([]byte(GrownSQL))
	dsn := testdb.New(t, LoadGrown, migrations.Fingerprint()+"+grown:"+hex.EncodeToString(sum[:8]))
	g := &Grown{Server: Replica(t, dsn, configure...)}
	ctx := context.Background()
	for _, s := range []struct {
		id   *uuid.UUID
		turn int
	}{{&g.Short, 3}, {&g.Long, 10000}} {
		require.NoError(t, g.DB.QueryRowContext(ctx, `SELECT id FROM sessions WHERE tenant = $1 AND current_turn = $2 ORDER BY created_at DESC LIMIT 1`,
			GrownTenant, s.turn).Scan(s.id))
	}
	return g
}

// LoadGrown migrates the empty database at dsn and loads GrownSQL into it,
// then gathers its statistics as autovacuum would have.
func LoadGrown(ctx context.Context, dsn string) error {
	if err := migrations.Apply(ctx, dsn); err != nil {
		return err
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	// Without arguments lib/pq sends the script as one simple query: one
	// transaction for all of it.
	if _, err := db.ExecContext(ctx, GrownSQL); err != nil {
		return fmt.Errorf("load grown database: %w", err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		return fmt.Errorf("analyze grown database: %w", err)
	}
	return nil
}

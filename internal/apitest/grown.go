package apitest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/app"
	"sessiongraph/internal/grown"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

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
	sum := sha256.Sum256([]byte(grown.SQL))
	dsn := testdb.New(t, LoadGrown, migrations.Fingerprint()+"+grown:"+hex.EncodeToString(sum[:8]))
	g := &Grown{Server: Replica(t, dsn, configure...)}
	ctx := context.Background()
	for _, s := range []struct {
		id   *uuid.UUID
		turn int
	}{{&g.Short, grown.Short}, {&g.Long, grown.Long}} {
		require.NoError(t, g.DB.QueryRowContext(ctx, `SELECT id FROM sessions WHERE tenant = $1 AND current_turn = $2 ORDER BY created_at DESC LIMIT 1`,
			grown.Tenant, s.turn).Scan(s.id))
	}
	return g
}

// LoadGrown migrates the empty database at dsn and loads the grown rows
// into it.
func LoadGrown(ctx context.Context, dsn string) error {
	if err := migrations.Apply(ctx, dsn); err != nil {
		return err
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return grown.Load(ctx, db)
}

// NewPages starts a server on a fresh clone of a database holding sessions
// sessions shaped as the nested page's (grown.LoadPages), ANALYZEd. Each
// size's template is loaded once per PostgreSQL server.
func NewPages(t testing.TB, sessions int, configure ...func(*app.Config)) *Server {
	t.Helper()
	sum := sha256.Sum256([]byte(grown.PagesSQL))
	dsn := testdb.New(t, func(ctx context.Context, dsn string) error {
		if err := migrations.Apply(ctx, dsn); err != nil {
			return err
		}
		db, err := sql.Open("postgres", dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		return grown.LoadPages(ctx, db, sessions)
	}, fmt.Sprintf("%s+pages%d:%s", migrations.Fingerprint(), sessions, hex.EncodeToString(sum[:8])))
	return Replica(t, dsn, configure...)
}

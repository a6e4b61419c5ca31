package migrations_test

import (
	"bytes"
	"context"
	"database/sql"
	"regexp"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/migrate"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// TestMigrationsMatchTheEntSchema applies every migration to an empty
// database and asks atlas what it would still change to reach the ent
// schema: the answer must be nothing.
func TestMigrationsMatchTheEntSchema(t *testing.T) {
	ctx := context.Background()
	empty := func(context.Context, string) error { return nil }
	dsn := testdb.New(t, empty, "empty database")
	require.NoError(t, migrations.Apply(ctx, dsn))

	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	defer db.Close()

	var plan bytes.Buffer
	err = migrate.NewSchema(entsql.OpenDB(dialect.Postgres, db)).WriteTo(ctx, &plan,
		schema.WithDropColumn(true), schema.WithDropIndex(true))
	require.NoError(t, err)
	changes := regexp.MustCompile(`(?im)^\s*(CREATE|ALTER|DROP|COMMENT)\b.*$`).FindAllString(plan.String(), -1)
	assert.Empty(t, changes, "the migrations drift from the ent schema; run `make migration NAME=...`")

	version, dirty, err := migrations.Status(ctx, db)
	require.NoError(t, err)
	latest, err := migrations.Latest()
	require.NoError(t, err)
	assert.False(t, dirty)
	assert.Equal(t, latest, version)

	// Applying again is a no-op, as at every restart.
	require.NoError(t, migrations.Apply(ctx, dsn))
}

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

// entCannotSay is what atlas would change to bring the migrated schema back
// to ent's, exactly: the differences the migration distributable makes on
// purpose, because ent gives each table a primary key on id alone and each
// edge a single-column foreign key, while Citus needs the distribution
// column in both (docs/scale-out.md, "What ent cannot say";
// citus_test.go checks the migrated side). Anything else atlas finds is
// drift, and so is one of these going missing.
var entCannotSay = []string{
	`ALTER TABLE "events" DROP CONSTRAINT "events_pkey", ADD PRIMARY KEY ("id");`,
	`ALTER TABLE "refs" DROP CONSTRAINT "refs_pkey", ADD PRIMARY KEY ("id");`,
	`ALTER TABLE "step_results" DROP CONSTRAINT "step_results_pkey", ADD PRIMARY KEY ("id");`,
	`ALTER TABLE "turns" DROP CONSTRAINT "turns_pkey", ADD PRIMARY KEY ("id");`,
	`ALTER TABLE "context_receipts" DROP CONSTRAINT "context_receipts_pkey", ADD PRIMARY KEY ("id");`,
	`ALTER TABLE "turn_items" DROP CONSTRAINT "turn_items_pkey", ADD PRIMARY KEY ("id");`,
	`ALTER TABLE "artifacts" DROP CONSTRAINT "artifacts_pkey", DROP CONSTRAINT "artifacts_refs_artifact", ADD PRIMARY KEY ("id"), ADD CONSTRAINT "artifacts_refs_artifact" FOREIGN KEY ("ref_id") REFERENCES "refs" ("id") ON DELETE CASCADE;`,
	// The O2O edge from refs makes ref_id unique on its own; the schema
	// has (session_id, ref_id) unique instead (ent/schema/artifact.go).
	`CREATE UNIQUE INDEX "artifacts_ref_id_key" ON "artifacts" ("ref_id");`,
	// A model call's receipt is referenced through its session; ent has
	// no edge to the receipt (ent/schema/modelcall.go).
	`ALTER TABLE "model_calls" DROP CONSTRAINT "model_calls_pkey", DROP CONSTRAINT "model_calls_context_receipts_model_calls", ADD PRIMARY KEY ("id");`,
}

// TestMigrationsMatchTheEntSchema applies every migration to an empty
// database and asks atlas what it would still change to reach the ent
// schema: the answer must be nothing but entCannotSay.
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
	assert.ElementsMatch(t, entCannotSay, changes,
		"the migrations drift from the ent schema; run `make migration NAME=...` (entCannotSay lists the known differences)")

	version, dirty, err := migrations.Status(ctx, db)
	require.NoError(t, err)
	latest, err := migrations.Latest()
	require.NoError(t, err)
	assert.False(t, dirty)
	assert.Equal(t, latest, version)

	// Applying again is a no-op, as at every restart.
	require.NoError(t, migrations.Apply(ctx, dsn))
}

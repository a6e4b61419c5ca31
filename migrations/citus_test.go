package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// placement says where every table of the migrated schema lives on Citus
// (docs/scale-out.md, "Citus"). Its statements, in order, are the ones the
// doc prints (TestScaleOutDocPrintsThePlacement), and the migrated schema
// obeys Citus's rules for it (TestTheSchemaIsDistributableOnCitus). A new
// table must be placed here.
type placement struct {
	// reference tables are copied to every node: small, read everywhere,
	// written rarely. They may be referenced, and never reference a
	// distributed table.
	reference []string
	// distributed tables, in the order they are distributed (a table after
	// those it references): the first is the colocation anchor, the others
	// are colocated with it.
	distributed []distributedTable
	// local tables stay on the coordinator only, each with why.
	local map[string]string
}

type distributedTable struct{ table, column string }

var citus = placement{
	reference: []string{"api_keys", "entity_types"},
	distributed: []distributedTable{
		{"sessions", "id"},
		{"session_keys", "id"},
		{"turns", "session_id"},
		{"refs", "session_id"},
		{"artifacts", "session_id"},
		{"step_results", "session_id"},
		{"context_receipts", "session_id"},
		{"model_calls", "session_id"},
		{"turn_items", "session_id"},
		{"events", "session_id"},
	},
	local: map[string]string{
		// golang-migrate's bookkeeping: one row, read and locked (with an
		// advisory lock) on the coordinator, where migrations run.
		"schema_migrations": "the migrator's version row",
	},
}

// statements are the Citus calls that distribute the schema, in order.
func (p placement) statements() []string {
	var out []string
	for _, t := range p.reference {
		out = append(out, fmt.Sprintf("SELECT create_reference_table('%s');", t))
	}
	for i, d := range p.distributed {
		if i == 0 {
			out = append(out, fmt.Sprintf("SELECT create_distributed_table('%s', '%s');", d.table, d.column))
			continue
		}
		out = append(out, fmt.Sprintf("SELECT create_distributed_table('%s', '%s', colocate_with => '%s');",
			d.table, d.column, p.distributed[0].table))
	}
	return out
}

func (p placement) distributionColumn(table string) (string, bool) {
	for _, d := range p.distributed {
		if d.table == table {
			return d.column, true
		}
	}
	return "", false
}

// citusViolations reads pg_catalog of the database and returns every way
// its public schema breaks Citus's rules for placement p: a distributed
// table's primary key, unique or exclusion constraint or unique index
// without its distribution column; a foreign key between distributed tables
// that does not pair their distribution columns; a foreign key from a
// reference table to a distributed one, or between a local table and a
// placed one; a trigger on a placed table; a table p does not place.
// There are no allowed exceptions today; one would be listed here by name,
// with its reason and the section of docs/scale-out.md that explains it.
func citusViolations(ctx context.Context, db *sql.DB, p placement) ([]string, error) {
	var out []string
	report := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	kind := func(table string) string {
		switch {
		case slices.Contains(p.reference, table):
			return "reference"
		case p.local[table] != "":
			return "local"
		}
		if _, ok := p.distributionColumn(table); ok {
			return "distributed"
		}
		return ""
	}

	tables, err := queryRows(ctx, db, 1, `SELECT c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	for _, r := range tables {
		if kind(r[0]) == "" {
			report("%s: a table that is neither distributed, reference nor local", r[0])
		}
	}

	// Constraints, with their columns (and the referenced ones) in order.
	cons, err := queryRows(ctx, db, 6, `SELECT cl.relname, con.conname, con.contype::text,
			COALESCE((SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY k(n, ord)
				JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n), ''),
			COALESCE(fcl.relname, ''),
			COALESCE((SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY k(n, ord)
				JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n), '')
		FROM pg_constraint con
		JOIN pg_class cl ON cl.oid = con.conrelid
		JOIN pg_namespace n ON n.oid = cl.relnamespace
		LEFT JOIN pg_class fcl ON fcl.oid = con.confrelid
		WHERE n.nspname = 'public' AND con.contype IN ('p', 'u', 'x', 'f') ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	names := map[string]string{"p": "primary key", "u": "unique constraint", "x": "exclusion constraint"}
	for _, r := range cons {
		table, name, typ, cols, ftable, fcols := r[0], r[1], r[2], strings.Split(r[3], ","), r[4], strings.Split(r[5], ",")
		column, distributed := p.distributionColumn(table)
		if typ != "f" {
			if distributed && !slices.Contains(cols, column) {
				report("%s: %s %s (%s) lacks the distribution column %s", table, names[typ], name, r[3], column)
			}
			continue
		}
		fcolumn, fdistributed := p.distributionColumn(ftable)
		switch {
		case distributed && fdistributed:
			paired := false
			for i := range cols {
				paired = paired || (cols[i] == column && i < len(fcols) && fcols[i] == fcolumn)
			}
			if !paired {
				report("%s: foreign key %s (%s) to %s (%s) does not pair the distribution columns %s and %s",
					table, name, r[3], ftable, r[5], column, fcolumn)
			}
		case kind(table) == "reference" && fdistributed:
			report("%s: reference table with foreign key %s to the distributed table %s", table, name, ftable)
		case (kind(table) == "local") != (kind(ftable) == "local"):
			report("%s: foreign key %s between a local table and %s", table, name, ftable)
		}
	}

	// Unique indexes that back no constraint (those were checked above).
	idx, err := queryRows(ctx, db, 3, `SELECT t.relname, i.relname,
			COALESCE((SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(n, ord)
				JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.n WHERE k.ord <= ix.indnkeyatts), '')
		FROM pg_index ix
		JOIN pg_class i ON i.oid = ix.indexrelid
		JOIN pg_class t ON t.oid = ix.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE n.nspname = 'public' AND ix.indisunique
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid AND c.contype IN ('p', 'u', 'x'))
		ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	for _, r := range idx {
		if column, ok := p.distributionColumn(r[0]); ok && !slices.Contains(strings.Split(r[2], ","), column) {
			report("%s: unique index %s (%s) lacks the distribution column %s", r[0], r[1], r[2], column)
		}
	}

	trig, err := queryRows(ctx, db, 2, `SELECT c.relname, t.tgname FROM pg_trigger t
		JOIN pg_class c ON c.oid = t.tgrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	for _, r := range trig {
		if k := kind(r[0]); k == "distributed" || k == "reference" {
			report("%s: trigger %s on a %s table", r[0], r[1], k)
		}
	}
	return out, nil
}

func queryRows(ctx context.Context, db *sql.DB, width int, query string) ([][]string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		row := make([]string, width)
		ptrs := make([]any, width)
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// The migrated schema can be distributed as placement citus says: Citus's
// create_distributed_table would accept every table (the rules by which it
// refused the schema before the Citus migrations), and every table is placed.
func TestTheSchemaIsDistributableOnCitus(t *testing.T) {
	ctx := context.Background()
	empty := func(context.Context, string) error { return nil }
	dsn := testdb.New(t, empty, "empty database")
	require.NoError(t, migrations.Apply(ctx, dsn))
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	defer db.Close()

	violations, err := citusViolations(ctx, db, citus)
	require.NoError(t, err)
	assert.Empty(t, violations)

	// Every placed table exists: the list names no table that is gone.
	placed := slices.Clone(citus.reference)
	for _, d := range citus.distributed {
		placed = append(placed, d.table)
	}
	for table := range citus.local {
		placed = append(placed, table)
	}
	for _, table := range placed {
		var exists bool
		require.NoError(t, db.QueryRow(`SELECT to_regclass('public.' || $1) IS NOT NULL`, table).Scan(&exists))
		assert.True(t, exists, "%s is placed but does not exist", table)
	}
}

// The checker catches each rule: tables made to break one rule each are
// reported, one line per broken rule, and nothing else is.
func TestTheCitusCheckerCatchesEachRule(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `
		CREATE TABLE bad_parent (id uuid, session_id uuid, k int, PRIMARY KEY (id));
		CREATE UNIQUE INDEX bad_parent_k ON bad_parent (k);
		CREATE UNIQUE INDEX bad_parent_id_session ON bad_parent (session_id, id);
		CREATE TABLE bad_child (id uuid, session_id uuid, parent_id uuid, n int,
			PRIMARY KEY (id, session_id), UNIQUE (n),
			CONSTRAINT bad_child_no_overlap EXCLUDE USING btree (n WITH =),
			CONSTRAINT bad_child_parent FOREIGN KEY (parent_id) REFERENCES bad_parent (id),
			CONSTRAINT bad_child_crossed FOREIGN KEY (parent_id, session_id) REFERENCES bad_parent (session_id, id));
		CREATE TABLE bad_reference (id uuid PRIMARY KEY, session_id uuid REFERENCES sessions (id));
		CREATE TABLE bad_unplaced (id int);
		CREATE FUNCTION bad_nothing() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
		CREATE TRIGGER bad_trigger AFTER INSERT ON bad_child FOR EACH ROW EXECUTE FUNCTION bad_nothing();`)
	require.NoError(t, err)

	p := citus
	p.reference = append(slices.Clone(citus.reference), "bad_reference")
	p.distributed = append(slices.Clone(citus.distributed),
		distributedTable{"bad_parent", "session_id"}, distributedTable{"bad_child", "session_id"})
	violations, err := citusViolations(ctx, db, p)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"bad_child: exclusion constraint bad_child_no_overlap (n) lacks the distribution column session_id",
		"bad_child: foreign key bad_child_crossed (parent_id,session_id) to bad_parent (session_id,id) does not pair the distribution columns session_id and session_id",
		"bad_child: foreign key bad_child_parent (parent_id) to bad_parent (id) does not pair the distribution columns session_id and session_id",
		"bad_child: trigger bad_trigger on a distributed table",
		"bad_child: unique constraint bad_child_n_key (n) lacks the distribution column session_id",
		"bad_parent: primary key bad_parent_pkey (id) lacks the distribution column session_id",
		"bad_parent: unique index bad_parent_k (k) lacks the distribution column session_id",
		"bad_reference: reference table with foreign key bad_reference_session_id_fkey to the distributed table sessions",
		"bad_unplaced: a table that is neither distributed, reference nor local",
	}, violations)
}

// docs/scale-out.md prints the statements of placement citus, in order,
// in the block that follows its marker line.
func TestScaleOutDocPrintsThePlacement(t *testing.T) {
	doc, err := os.ReadFile("../docs/scale-out.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)<!-- citus placement: migrations/citus_test.go -->\\s*```sql\\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, block, "the doc's statements block, after its marker line")
	var got []string
	for _, line := range strings.Split(string(block[1]), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			got = append(got, line)
		}
	}
	assert.Equal(t, citus.statements(), got)
}

// The checker finds, in the schema of before (the last migration of the
// global event sequence), exactly what Citus refused in it: the
// sessions' unique index on the key, the primary keys on id alone, the
// artifact's unique ref_id and its foreign key to refs(id), the events'
// global unique sequence and the trigger that numbered it.
func TestTheCheckerFindsWhatCitusRefusedBefore(t *testing.T) {
	ctx := context.Background()
	empty := func(context.Context, string) error { return nil }
	dsn := testdb.New(t, empty, "empty database")
	require.NoError(t, migrations.ApplyTo(ctx, dsn, globalSequence))
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	defer db.Close()

	p := citus
	p.distributed = slices.DeleteFunc(slices.Clone(citus.distributed),
		func(d distributedTable) bool { return d.table == "session_keys" })
	violations, err := citusViolations(ctx, db, p)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"sessions: unique index session_tenant_external_key (tenant,external_key) lacks the distribution column id",
		"turns: primary key turns_pkey (id) lacks the distribution column session_id",
		"refs: primary key refs_pkey (id) lacks the distribution column session_id",
		"artifacts: primary key artifacts_pkey (id) lacks the distribution column session_id",
		"step_results: primary key step_results_pkey (id) lacks the distribution column session_id",
		"events: primary key events_pkey (id) lacks the distribution column session_id",
		"artifacts: unique index artifacts_ref_id_key (ref_id) lacks the distribution column session_id",
		"artifacts: foreign key artifacts_refs_artifact (ref_id) to refs (id) does not pair the distribution columns session_id and session_id",
		"events: unique index events_sequence_key (sequence) lacks the distribution column session_id",
		"events: trigger events_sequence_at_commit on a distributed table",
	}, violations)
}

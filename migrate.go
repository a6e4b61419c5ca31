package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/lib/pq"

	"sessiongraph/internal/config"
	"sessiongraph/migrations"
)

const migrateUsage = `usage:
  sessiongraph migrate          apply every migration this binary carries, then report the version
  sessiongraph migrate status   report the version; exit 1 unless it is this binary's latest
each against DATABASE_URL (or -database-url), or with -dev this checkout's
development database. The server applies migrations at start too; run
migrate as a deploy step to apply them once, before the new replicas start.`

// migrateCommand applies or reports the database's schema migrations.
func migrateCommand(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	verb := "up"
	if len(args) > 0 && args[0] == "status" {
		verb, args = "status", args[1:]
	}
	s, rest, err := config.Load("sessiongraph migrate", args, env, stderr, nil)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, migrateUsage)
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "sessiongraph migrate:", err)
		return 2
	case len(rest) > 0:
		fmt.Fprintf(stderr, "sessiongraph migrate: unknown command %q\n%s\n", rest[0], migrateUsage)
		return 2
	}
	cfg, release, ok := commandDatabase(ctx, "sessiongraph migrate", s, stderr)
	if !ok {
		return 2
	}
	defer release()
	dsn := cfg.DatabaseURL
	if verb == "up" {
		if err := migrations.Apply(ctx, dsn); err != nil {
			fmt.Fprintln(stderr, "sessiongraph migrate:", err)
			return 1
		}
	}
	have, dirty, err := schemaVersion(ctx, dsn)
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph migrate:", err)
		return 1
	}
	want, err := migrations.Latest()
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph migrate:", err)
		return 1
	}
	switch {
	case dirty:
		fmt.Fprintf(stdout, "schema at version %d, dirty: a migration failed halfway; fix the database by hand, then run migrate again\n", have)
		return 1
	case have == 0:
		fmt.Fprintf(stdout, "no migration applied; this binary's latest is %d: run sessiongraph migrate\n", want)
		return 1
	case have < want:
		fmt.Fprintf(stdout, "schema at version %d; this binary's latest is %d: run sessiongraph migrate\n", have, want)
		return 1
	case have > want:
		fmt.Fprintf(stdout, "schema at version %d, newer than this binary's latest (%d): a newer release migrated it\n", have, want)
		return 1
	}
	fmt.Fprintf(stdout, "schema at version %d, this binary's latest\n", have)
	return 0
}

// schemaVersion is the database's migration version, 0 when none was
// ever applied.
func schemaVersion(ctx context.Context, dsn string) (uint, bool, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, false, err
	}
	defer db.Close()
	v, dirty, err := migrations.Status(ctx, db)
	if pqErr := (*pq.Error)(nil); errors.As(err, &pqErr) && pqErr.Code == "42P01" { // undefined_table
		return 0, false, nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return v, dirty, err
}

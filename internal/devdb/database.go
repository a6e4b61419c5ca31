package devdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// probeTimeout bounds how long we wait for a server that may not be there.
const probeTimeout = 2 * time.Second

// answers reports whether the server behind dsn accepts a connection and runs SELECT 1.
func answers(ctx context.Context, dsn string) bool {
	_, err := queryString(ctx, dsn, "SELECT '1'")
	return err == nil
}

// queryString runs a one-value query on a short-lived connection. It goes
// through pgx, which bounds the whole connection start-up by ctx: lib/pq
// bounds only the dial, so a port that accepts and never answers held a
// probe of it for ever.
func queryString(ctx context.Context, dsn, query string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, query).Scan(&v)
	return v, err
}

// createDatabase creates name unless it exists. Concurrent callers may both
// see it missing; the loser's "already exists" is success, not an error.
func createDatabase(ctx context.Context, adminDSN, name string) error {
	db, err := sql.Open("postgres", adminDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	var exists bool
	err = db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists)
	if err != nil {
		return fmt.Errorf("look up database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	// CREATE DATABASE cannot run in a transaction, so it goes straight to Exec.
	_, err = db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name))
	// A racing CREATE reports duplicate_database, or unique_violation when both
	// reach the catalog insert together.
	if err != nil && pq.As(err, pqerror.DuplicateDatabase, pqerror.UniqueViolation) == nil {
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

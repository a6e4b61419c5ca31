// Package migrations embeds the versioned SQL migrations generated from the
// ent schema (`make migration NAME=...`) and applies them in-process.
package migrations

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/postgres"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	_ "github.com/lib/pq" // the postgres driver
)

//go:embed *.sql atlas.sum
var files embed.FS

// Apply brings the database at dsn up to the latest migration. golang-migrate
// holds its own lock while it runs, so replicas starting together are safe.
func Apply(ctx context.Context, dsn string) error {
	return migrating(ctx, dsn, func(m *migrate.Migrate) error {
		if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
			return fmt.Errorf("applying migrations: %w", err)
		}
		return nil
	})
}

// migrating runs do with the migrations of the database at dsn.
func migrating(ctx context.Context, dsn string, do func(*migrate.Migrate) error) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	m, err := open(ctx, db)
	if err != nil {
		return err
	}
	return do(m)
}

// Status reports the version the database is at and whether a migration
// failed halfway (dirty).
func Status(ctx context.Context, db *sql.DB) (version uint, dirty bool, err error) {
	err = db.QueryRowContext(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&version, &dirty)
	return version, dirty, err
}

// Latest is the version of the newest embedded migration.
func Latest() (uint, error) {
	src, err := iofs.New(files, ".")
	if err != nil {
		return 0, err
	}
	v, err := src.First()
	if err != nil {
		return 0, err
	}
	for {
		next, err := src.Next(v)
		if err != nil {
			return v, nil
		}
		v = next
	}
}

// Fingerprint identifies the set of migrations: it changes whenever one is
// added or edited (atlas.sum hashes them all).
func Fingerprint() string {
	sum, err := files.ReadFile("atlas.sum")
	if err != nil {
		panic(err) // embedded at build time; cannot be missing
	}
	h := sha256.Sum256(sum)
	return hex.EncodeToString(h[:])
}

func open(ctx context.Context, db *sql.DB) (*migrate.Migrate, error) {
	src, err := iofs.New(files, ".")
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	drv, err := postgres.WithConnection(ctx, conn, &postgres.Config{})
	if err != nil {
		return nil, err
	}
	return migrate.NewWithInstance("iofs", src, "postgres", drv)
}

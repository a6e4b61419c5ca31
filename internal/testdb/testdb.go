// Package testdb gives each test its own PostgreSQL database, cloned from a
// template that was migrated once, so tests run in parallel and never see
// each other's rows.
package testdb

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lib/pq"
)

// Migrator applies the schema to an empty database given its DSN.
type Migrator func(ctx context.Context, dsn string) error

// cleanupTimeout bounds dropping a test database after the test's own context is gone.
const cleanupTimeout = 30 * time.Second

// New returns the DSN of a fresh database cloned from a migrated template, dropped in t.Cleanup.
// The template is named after fingerprint, so changed migrations get a new one.
func New(t testing.TB, migrate Migrator, fingerprint string) string {
	t.Helper()
	ctx := context.Background()
	srv, err := shared()
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	tmpl, err := srv.template(ctx, migrate, fingerprint)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	name := testDatabaseName(rand.Text()[:16])
	if err := srv.everyNode(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE "+pq.QuoteIdentifier(tmpl)); err != nil {
		t.Fatalf("testdb: clone %s: %v", tmpl, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := srv.dropDatabase(ctx, name); err != nil {
			// Not the test's failure: the next test binary on this host
			// drops it (leftovers.go).
			t.Logf("testdb: %v; left for the next run to drop", err)
		}
	})
	return withDatabase(srv.adminDSN, name)
}

// dropDatabase terminates whatever the test left connected, then drops the
// database; FORCE does both on PostgreSQL 13+. On Citus, FORCE does not end
// the coordinator's maintenance daemon, which visits each database now and
// then (recovering two-phase commits): the drop is tried again while the
// database is still in use (55006), until the cleanup's deadline.
func (s *server) dropDatabase(ctx context.Context, name string) error {
	retry := time.NewTicker(250 * time.Millisecond)
	defer retry.Stop()
	for {
		err := s.everyNode(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)")
		var pqErr *pq.Error
		if err == nil || s.citus == nil || !errors.As(err, &pqErr) || pqErr.Code != "55006" {
			if err != nil {
				return fmt.Errorf("drop %s: %w", name, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drop %s: %w", name, err)
		case <-retry.C:
		}
	}
}

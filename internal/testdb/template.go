package testdb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/lib/pq"
)

// templateLock serialises template creation across test binaries. It is an
// xact lock, so a crashed process cannot leave it held.
const templateLock int64 = 0x73675f746d706c // "sg_tmpl"

// templateName is the database a fingerprint's migrations are applied to once.
func templateName(fingerprint string) string {
	sum := sha256.Sum256([]byte(fingerprint))
	return "sg_tmpl_" + hex.EncodeToString(sum[:])[:12]
}

// template returns the name of the ready template for fingerprint, making it
// at most once per process and, through the advisory lock, once per server.
func (s *server) template(ctx context.Context, migrate Migrator, fingerprint string) (string, error) {
	s.mu.Lock()
	once, ok := s.templates[fingerprint]
	if !ok {
		once = sync.OnceValues(func() (string, error) { return s.makeTemplate(ctx, migrate, fingerprint) })
		s.templates[fingerprint] = once
	}
	s.mu.Unlock()
	return once()
}

// makeTemplate holds the lock in a transaction on one connection while the
// pool checks for, creates and migrates the template. A template is ready
// once marked IS_TEMPLATE; one without the mark is a crashed run's leftover
// and is remade.
func (s *server) makeTemplate(ctx context.Context, migrate Migrator, fingerprint string) (string, error) {
	name := templateName(fingerprint)
	lockConn, err := s.admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer lockConn.Close()
	tx, err := lockConn.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", templateLock); err != nil {
		return "", fmt.Errorf("lock templates: %w", err)
	}

	var ready bool
	err = s.admin.QueryRowContext(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&ready)
	switch {
	case err == nil && ready:
		return name, tx.Commit()
	case err == nil:
		if err := s.dropDatabase(ctx, name); err != nil {
			return "", fmt.Errorf("drop half-made template: %w", err)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("look up template %s: %w", name, err)
	}

	// template0 rather than template1: nobody can be connected to template0,
	// so the copy never fails with "source database is being accessed".
	if err := s.everyNode(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("create template %s: %w", name, err)
	}
	if err := s.prepareCitus(ctx, name); err != nil {
		return "", err
	}
	if err := migrate(ctx, withDatabase(s.adminDSN, name)); err != nil {
		return "", fmt.Errorf("migrate template %s: %w", name, err)
	}
	if err := s.distribute(ctx, name); err != nil {
		return "", fmt.Errorf("distribute template %s: %w", name, err)
	}
	if err := s.seal(ctx, name); err != nil {
		return "", err
	}
	return name, tx.Commit()
}

// seal closes the template to connections, ends any the migrator left open
// (CREATE DATABASE ... TEMPLATE fails while anyone is connected), and marks
// it ready.
func (s *server) seal(ctx context.Context, name string) error {
	quoted := pq.QuoteIdentifier(name)
	steps := []struct{ what, query string }{
		{"close template to connections", "ALTER DATABASE " + quoted + " WITH ALLOW_CONNECTIONS false"},
		{"end template connections", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = " + pq.QuoteLiteral(name)},
		{"mark template ready", "ALTER DATABASE " + quoted + " WITH IS_TEMPLATE true"},
	}
	for _, step := range steps {
		if err := s.everyNode(ctx, step.query); err != nil {
			return fmt.Errorf("%s %s: %w", step.what, name, err)
		}
	}
	return nil
}

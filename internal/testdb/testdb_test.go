package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConcurrentNewGivesTwoIsolatedDatabases(t *testing.T) {
	migrate, calls := countingMigrator(t)
	fp := freshFingerprint(t)

	dsns := make([]string, 2)
	var wg sync.WaitGroup
	for i := range dsns {
		wg.Go(func() { dsns[i] = New(t, migrate, fp) })
	}
	wg.Wait()

	require.NotEqual(t, dsns[0], dsns[1])
	require.Equal(t, int32(1), calls.Load())
	a, b := open(t, dsns[0]), open(t, dsns[1])
	require.True(t, hasTable(t, a, "t"), "clone carries the migrated schema")
	require.True(t, hasTable(t, b, "t"), "clone carries the migrated schema")
	_, err := a.Exec("CREATE TABLE only_in_a (x int)")
	require.NoError(t, err)
	require.True(t, hasTable(t, a, "only_in_a"))
	require.False(t, hasTable(t, b, "only_in_a"))
}

func TestMigratorRunsOncePerFingerprint(t *testing.T) {
	migrate, calls := countingMigrator(t)
	first, second := freshFingerprint(t), freshFingerprint(t)

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { New(t, migrate, first) })
	}
	wg.Wait()
	New(t, migrate, first)
	require.Equal(t, int32(1), calls.Load())

	New(t, migrate, second)
	require.Equal(t, int32(2), calls.Load())
}

func TestTemplateIsMadeOnceAcrossProcesses(t *testing.T) {
	migrate, calls := countingMigrator(t)
	fp := freshFingerprint(t)
	srv, err := shared()
	require.NoError(t, err)

	// Calling makeTemplate directly skips the per-process cache, as separate
	// test binaries would; only the advisory lock stands between them.
	names := make([]string, 4)
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() { names[i], errs[i] = srv.makeTemplate(t.Context(), migrate, fp) })
	}
	wg.Wait()

	for i := range names {
		require.NoError(t, errs[i])
		require.Equal(t, templateName(fp), names[i])
	}
	require.Equal(t, int32(1), calls.Load())
}

func TestHalfMadeTemplateIsRemade(t *testing.T) {
	fp := freshFingerprint(t)
	srv, err := shared()
	require.NoError(t, err)
	// A crashed run: the template exists with a partial schema but was never marked ready.
	_, err = srv.admin.Exec("CREATE DATABASE " + pq.QuoteIdentifier(templateName(fp)))
	require.NoError(t, err)
	crashed := open(t, withDatabase(srv.adminDSN, templateName(fp)))
	_, err = crashed.Exec("CREATE TABLE half_done (x int)")
	require.NoError(t, err)
	require.NoError(t, crashed.Close())

	migrate, calls := countingMigrator(t)
	db := open(t, New(t, migrate, fp))

	require.Equal(t, int32(1), calls.Load())
	require.True(t, hasTable(t, db, "t"))
	require.False(t, hasTable(t, db, "half_done"))
}

func TestCleanupDropsTheDatabaseEvenWithConnectionsOpen(t *testing.T) {
	migrate, _ := countingMigrator(t)
	fp := freshFingerprint(t)
	var name string
	t.Run("test using a database", func(t *testing.T) {
		dsn := New(t, migrate, fp)
		db := open(t, dsn)
		require.NoError(t, db.Ping())
		name = currentDatabase(t, db)
		leaked, err := sql.Open("postgres", dsn) // never closed: cleanup must cope
		require.NoError(t, err)
		require.NoError(t, leaked.Ping())
	})

	srv, err := shared()
	require.NoError(t, err)
	var exists bool
	require.NoError(t, srv.admin.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists))
	require.False(t, exists, "database %s outlived its test", name)
}

// countingMigrator creates table t and counts its calls. It leaves its pool
// open until the test ends, as a careless migrator might, to prove the
// template is still sealed and cloneable.
func countingMigrator(t *testing.T) (Migrator, *atomic.Int32) {
	var calls atomic.Int32
	return func(ctx context.Context, dsn string) error {
		calls.Add(1)
		db, err := sql.Open("postgres", dsn)
		if err != nil {
			return err
		}
		t.Cleanup(func() { db.Close() })
		_, err = db.ExecContext(ctx, "CREATE TABLE t (x int)")
		return err
	}, &calls
}

// freshFingerprint is unique to this run, so the template is made here and
// not found from an earlier run; it is dropped when the test ends.
func freshFingerprint(t *testing.T) string {
	fp := "test-" + rand.Text()
	t.Cleanup(func() {
		srv, err := shared()
		require.NoError(t, err)
		name := pq.QuoteIdentifier(templateName(fp))
		// A database marked IS_TEMPLATE cannot be dropped until unmarked.
		_, _ = srv.admin.Exec("ALTER DATABASE " + name + " WITH IS_TEMPLATE false")
		_, err = srv.admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		require.NoError(t, err)
	})
	return fp
}

func open(t *testing.T, dsn string) *sql.DB {
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func hasTable(t *testing.T, db *sql.DB, table string) bool {
	var found bool
	require.NoError(t, db.QueryRow("SELECT to_regclass($1) IS NOT NULL", table).Scan(&found))
	return found
}

func currentDatabase(t *testing.T, db *sql.DB) string {
	var name string
	require.NoError(t, db.QueryRow("SELECT current_database()").Scan(&name))
	return name
}

// A proxy presents the test's database over TCP and over a Unix socket,
// whichever DATABASE_URL names, and takes it down and back up.
func TestProxyReachesTheSameDatabaseOverEitherTransport(t *testing.T) {
	migrate, _ := countingMigrator(t)
	dsn := New(t, migrate, freshFingerprint(t))
	want := currentDatabase(t, open(t, dsn))
	for _, transport := range Transports {
		t.Run(string(transport), func(t *testing.T) {
			p := NewProxy(t, dsn, transport)
			if transport == Unix {
				require.Contains(t, p.DSN, "host=%2F", "a socket directory, not a port")
			} else {
				require.Contains(t, p.DSN, "127.0.0.1:")
			}
			db := open(t, p.DSN)
			require.Equal(t, want, currentDatabase(t, db))

			p.Cut()
			db.SetMaxIdleConns(0) // the next query needs a new connection
			require.Error(t, db.Ping(), "a cut proxy refuses connections")
			p.Mend()
			require.NoError(t, db.Ping())
		})
	}
}

// A test database whose process is gone (its drop failed, or the process
// was killed) is dropped by the next test binary on the host; one whose
// process lives, another host's, and any other database are left alone.
func TestLeftoverTestDatabasesAreDroppedByTheNextRun(t *testing.T) {
	srv, err := shared()
	require.NoError(t, err)
	gone := exec.Command("true")
	require.NoError(t, gone.Run()) // its pid is now no process's
	names := map[string]bool{
		fmt.Sprintf("sg_test_%s_%d_leftover", hostTag, gone.Process.Pid): true,
		fmt.Sprintf("sg_test_%s_%d_alive", hostTag, os.Getpid()):         false,
		fmt.Sprintf("sg_test_00000000_%d_otherhost", gone.Process.Pid):   false,
	}
	for name := range names {
		_, err := srv.admin.Exec("CREATE DATABASE " + pq.QuoteIdentifier(name))
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = srv.admin.Exec("DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(name) + " WITH (FORCE)") })
	}
	dropped := srv.dropLeftovers(context.Background())
	for name, leftover := range names {
		var exists bool
		require.NoError(t, srv.admin.QueryRow("SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists))
		assert.Equal(t, !leftover, exists, name)
		assert.Equal(t, leftover, slices.Contains(dropped, name), name)
	}
}

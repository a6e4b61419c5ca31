package devdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lib/pq"
	"github.com/stretchr/testify/require"
)

func TestEnsureUsesTheSharedServerWhenItAnswers(t *testing.T) {
	if !answers(t.Context(), adminDSN(sharedPort)) {
		t.Skip("no PostgreSQL on 127.0.0.1:5432")
	}
	name := "sg_devdb_" + strings.ToLower(rand.Text()[:10])
	c, err := Ensure(t.Context(), Options{DataDir: filepath.Join(t.TempDir(), "postgres"), Database: name})
	require.NoError(t, err)
	t.Cleanup(func() { dropDatabase(t, c.AdminDSN, name) })

	require.False(t, c.Private)
	require.Equal(t, fmt.Sprintf("postgres://postgres@127.0.0.1:5432/%s?sslmode=disable", name), c.DSN)
	require.Equal(t, "1", selectOne(t, c.DSN))
	require.NoError(t, c.Stop(t.Context()), "Stop on a shared server is a no-op")
	require.Equal(t, "1", selectOne(t, c.DSN))
}

func TestEnsureToleratesConcurrentCreateDatabase(t *testing.T) {
	if !answers(t.Context(), adminDSN(sharedPort)) {
		t.Skip("no PostgreSQL on 127.0.0.1:5432")
	}
	name := "sg_devdb_" + strings.ToLower(rand.Text()[:10])
	t.Cleanup(func() { dropDatabase(t, adminDSN(sharedPort), name) })
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() { errs <- createDatabase(t.Context(), adminDSN(sharedPort), name) }()
	}
	for range cap(errs) {
		require.NoError(t, <-errs)
	}
}

func TestPrivateClusterStartsIsReusedAndStops(t *testing.T) {
	dataDir := filepath.Join(postgresReadableTempDir(t), "postgres")
	opts := Options{DataDir: dataDir, Database: "sessiongraph", SkipShared: true}

	started, err := Ensure(t.Context(), opts)
	if errors.Is(err, ErrNoPostgres) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = started.Stop(context.Background()) })
	require.True(t, started.Private)
	require.Equal(t, "1", selectOne(t, started.DSN))
	require.FileExists(t, dataDir+".log")

	reused, err := Ensure(t.Context(), opts)
	require.NoError(t, err)
	require.False(t, reused.Private, "a cluster found running belongs to whoever started it")
	require.Equal(t, started.DSN, reused.DSN)
	require.NoError(t, reused.Stop(t.Context()))
	require.Equal(t, "1", selectOne(t, started.DSN), "Stop on a reused cluster leaves it running")

	require.NoError(t, started.Stop(t.Context()))
	require.False(t, answers(t.Context(), started.AdminDSN))
	require.NoFileExists(t, filepath.Join(dataDir, "postmaster.pid"))
}

func TestPrivateClusterUnderADirThePostgresUserCannotReach(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root hands the cluster to another account")
	}
	// t.TempDir's parent is 0700, like a checkout under /root.
	dataDir := filepath.Join(t.TempDir(), "postgres")
	c, err := Ensure(t.Context(), Options{DataDir: dataDir, SkipShared: true})
	if errors.Is(err, ErrNoPostgres) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, os.RemoveAll(filepath.Dir(c.dataDir))) })
	t.Cleanup(func() { _ = c.Stop(context.Background()) })

	require.True(t, c.Private)
	require.True(t, strings.HasPrefix(c.dataDir, "/tmp/sessiongraph-"), c.dataDir)
	require.Equal(t, "1", selectOne(t, c.DSN))
	require.NoError(t, c.Stop(t.Context()))
}

func TestNoBinariesIsOneClearLine(t *testing.T) {
	require.Equal(t, "no PostgreSQL found: install it (apt-get install postgresql) or set DATABASE_URL", ErrNoPostgres.Error())
}

// postgresReadableTempDir is a t.TempDir the postgres account can traverse:
// Go creates the per-test parent with mode 0700.
func postgresReadableTempDir(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

func selectOne(t *testing.T, dsn string) string {
	t.Helper()
	v, err := queryString(t.Context(), dsn, "SELECT '1'")
	require.NoError(t, err)
	return v
}

func dropDatabase(t *testing.T, adminDSN, name string) {
	db, err := sql.Open("postgres", adminDSN)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)")
	require.NoError(t, err)
}

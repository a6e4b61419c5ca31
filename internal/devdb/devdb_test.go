package devdb

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lib/pq"
	"github.com/stretchr/testify/require"
)

func TestEnsureUsesTheSharedServerWhenItAnswers(t *testing.T) {
	if !answers(t.Context(), adminDSN(localServer)) {
		t.Skip("no PostgreSQL on 127.0.0.1:5432")
	}
	name := "sg_devdb_" + strings.ToLower(rand.Text()[:10])
	c, err := Ensure(t.Context(), Options{DataDir: filepath.Join(t.TempDir(), "postgres"), Database: name, LocalServer: true})
	require.NoError(t, err)
	t.Cleanup(func() { dropDatabase(t, c.AdminDSN, name) })

	require.False(t, c.Private)
	require.Equal(t, fmt.Sprintf("postgres://postgres@127.0.0.1:5432/%s?sslmode=disable", name), c.DSN)
	require.Equal(t, "1", selectOne(t, c.DSN))
	require.NoError(t, c.Stop(t.Context()), "Stop on a shared server is a no-op")
	require.Equal(t, "1", selectOne(t, c.DSN))
}

func TestEnsureToleratesConcurrentCreateDatabase(t *testing.T) {
	if !answers(t.Context(), adminDSN(localServer)) {
		t.Skip("no PostgreSQL on 127.0.0.1:5432")
	}
	name := "sg_devdb_" + strings.ToLower(rand.Text()[:10])
	t.Cleanup(func() { dropDatabase(t, adminDSN(localServer), name) })
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() { errs <- createDatabase(t.Context(), adminDSN(localServer), name) }()
	}
	for range cap(errs) {
		require.NoError(t, <-errs)
	}
}

func TestPrivateClusterStartsIsReusedAndStops(t *testing.T) {
	dataDir := filepath.Join(postgresReadableTempDir(t), "postgres")
	opts := Options{DataDir: dataDir, Database: "sessiongraph"}

	started, err := Ensure(t.Context(), opts)
	if errors.Is(err, ErrNoPostgres) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = started.Stop(context.Background()) })
	require.True(t, started.Private)
	require.Equal(t, "1", selectOne(t, started.DSN))
	require.FileExists(t, dataDir+".log")
	require.Equal(t, "postgres://postgres@/sessiongraph?host="+url.QueryEscape(dataDir)+"&port=5432&sslmode=disable", started.DSN,
		"the cluster's only door is the Unix socket in its data directory")
	listen, err := queryString(t.Context(), started.DSN, "SHOW listen_addresses")
	require.NoError(t, err)
	require.Empty(t, listen, "no TCP port: nothing outside the checkout's socket reaches it")

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
	c, err := Ensure(t.Context(), Options{DataDir: dataDir})
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

// Two checkouts of the repository each get a cluster of their own, even on
// a machine where a PostgreSQL answers on 127.0.0.1:5432 that both could
// use: the development database is never one another process may be using.
func TestTwoCheckoutsNeverShareADevelopmentDatabase(t *testing.T) {
	parent := postgresReadableTempDir(t)
	var clusters []*Cluster
	for _, checkout := range []string{"one", "two"} {
		c, err := Ensure(t.Context(), Options{DataDir: filepath.Join(parent, checkout, ".data", "postgres"), Database: "sessiongraph"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Stop(context.Background()) })
		require.True(t, c.Private, "%s started its own cluster", checkout)
		clusters = append(clusters, c)
	}
	_, err := queryString(t.Context(), clusters[0].DSN, "CREATE TABLE only_in_one ()")
	require.ErrorIs(t, err, sql.ErrNoRows, "CREATE TABLE returns no row")
	for i, checkout := range []string{"one", "two"} {
		dir, err := queryString(t.Context(), clusters[i].DSN, "SELECT current_setting('data_directory')")
		require.NoError(t, err)
		require.Equal(t, filepath.Join(parent, checkout, ".data", "postgres"), dir)
	}
	tables, err := queryString(t.Context(), clusters[1].DSN, "SELECT count(*)::text FROM pg_tables WHERE tablename = 'only_in_one'")
	require.NoError(t, err)
	require.Equal(t, "0", tables, "checkout two does not see checkout one's table")
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

// A server on the shared port that asks for a password we do not have (as
// Debian's own cluster does over TCP) is not used, and neither is one that
// accepts the connection but never answers: tests get the private cluster.
func TestEnsureFallsBackWhenTheSharedPortRefusesUs(t *testing.T) {
	for name, serve := range map[string]func(net.Conn){
		"asks for a password": askForPassword,
		"never answers":       func(c net.Conn) { _, _ = io.Copy(io.Discard, c) },
	} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			t.Cleanup(func() { ln.Close() })
			asked := make(chan struct{}, 16)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					asked <- struct{}{}
					go func() { defer c.Close(); serve(c) }()
				}
			}()
			saved := localServer
			localServer = address{port: ln.Addr().(*net.TCPAddr).Port}
			t.Cleanup(func() { localServer = saved })

			dataDir := filepath.Join(postgresReadableTempDir(t), "postgres")
			c, err := Ensure(t.Context(), Options{DataDir: dataDir, Database: "sessiongraph", LocalServer: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Stop(context.Background()) })
			require.NotEmpty(t, asked, "the shared port was tried first")
			require.True(t, c.Private, "the private cluster, not the server that refused us")
			require.Equal(t, "1", selectOne(t, c.DSN))
		})
	}
}

// askForPassword answers a startup message as a PostgreSQL that wants an
// MD5 password does, and refuses whatever comes back.
func askForPassword(c net.Conn) {
	r := bufio.NewReader(c)
	if _, err := readMessage(r, false); err != nil {
		return
	}
	_, _ = c.Write([]byte{'R', 0, 0, 0, 12, 0, 0, 0, 5, 1, 2, 3, 4}) // AuthenticationMD5Password, salt
	if _, err := readMessage(r, true); err != nil {
		return
	}
	fields := "SFATAL\x00VFATAL\x00C28P01\x00Mpassword authentication failed for user \"postgres\"\x00\x00"
	msg := binary.BigEndian.AppendUint32([]byte{'E'}, uint32(4+len(fields)))
	_, _ = c.Write(append(msg, fields...))
}

// readMessage reads one frontend message: the startup message has no type byte.
func readMessage(r *bufio.Reader, typed bool) ([]byte, error) {
	if typed {
		if _, err := r.ReadByte(); err != nil {
			return nil, err
		}
	}
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, err
	}
	body := make([]byte, n-4)
	_, err := io.ReadFull(r, body)
	return body, err
}

// With a TCP port (make test-transports), the private cluster also listens
// on loopback, where it asks for its password, as a production server does.
func TestPrivateClusterOnATCPPortAsksForItsPassword(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nobody uses
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	dataDir := filepath.Join(postgresReadableTempDir(t), "postgres")
	c, err := Ensure(t.Context(), Options{DataDir: dataDir, Database: "sessiongraph", TCPPort: port})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop(context.Background()) })

	require.Equal(t, "1", selectOne(t, c.DSN), "the socket")
	require.Equal(t, "1", selectOne(t, c.TCPDSN), "the port, with the password")
	u, err := url.Parse(c.TCPDSN)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("127.0.0.1:%d", port), u.Host)
	u.User = url.User("postgres")
	_, err = queryString(t.Context(), u.String(), "SELECT '1'")
	require.ErrorContains(t, err, "password", "no password, no connection over TCP")
}

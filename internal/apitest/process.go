package apitest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

// replicaProcessEnv carries the database a replica process serves.
const replicaProcessEnv = "SG_APITEST_REPLICA_DSN"

// ReplicaProcess starts another replica on s's database in a child
// process: this test binary again, which the package's TestMain hands to
// ServeReplicaProcess. Nothing but PostgreSQL joins the two replicas, as
// between two hosts. The Server it returns reaches the child over HTTP
// only (its App is nil) and sends s's admin key; the child stops with the
// test.
func ReplicaProcess(t testing.TB, s *Server) *Server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaProcessEnv+"="+s.DSN)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close() // the child shuts down when its stdin closes
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Error("the replica process did not stop within 20s")
		}
	})

	serving := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		serving <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var url string
	select {
	case line := <-serving:
		url, _ = strings.CutPrefix(line, "serving ")
		require.True(t, strings.HasPrefix(url, "http://"), "the replica process printed %q", line)
	case <-time.After(60 * time.Second):
		t.Fatal("the replica process did not start within 60s")
	}
	return &Server{URL: url, DSN: s.DSN, AdminKey: s.AdminKey, Key: s.AdminKey, statements: new(atomic.Int64)}
}

// ServeReplicaProcess serves as a replica when this process is one that
// ReplicaProcess started, until its stdin closes, and reports whether it
// was one. A test package that starts replica processes calls it first
// thing in TestMain and exits when it returns true.
func ServeReplicaProcess() bool {
	dsn := os.Getenv(replicaProcessEnv)
	if dsn == "" {
		return false
	}
	if err := serveReplica(dsn); err != nil {
		fmt.Fprintln(os.Stderr, "replica process:", err)
		os.Exit(1)
	}
	return true
}

func serveReplica(dsn string) error {
	ctx := context.Background()
	settings := config.Defaults()
	settings.DatabaseURL = dsn
	a, err := app.New(ctx, app.Config{
		Settings: settings,
		NoReaper: true,
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("serving http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it, or dies
	shutdown, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

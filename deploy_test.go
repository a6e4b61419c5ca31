package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/event"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testdb"
	"sessiongraph/internal/testnpm"
	"sessiongraph/internal/testpy"
	"sessiongraph/migrations"
)

// terminate stops the replica as a rolling deploy does (SIGTERM) and
// returns its exit code once it has exited.
func (r *replica) terminate() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotNil(r.t, r.cmd)
	require.NoError(r.t, r.cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- r.cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		_ = r.cmd.Process.Kill()
		<-exited
		r.t.Fatalf("replica %s did not exit within 60s of SIGTERM", r.addr)
	}
	r.cmd = nil
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	require.NoError(r.t, err)
	return 0
}

// failover is the load balancer in front of the replicas: one address, and
// each new connection goes to the first replica that accepts it, so that
// every client starts on the first replica and moves on when it goes away.
type failover struct {
	ln       net.Listener
	backends []string
	mu       sync.Mutex
	conns    map[net.Conn]bool
}

func newFailover(t *testing.T, backends ...string) *failover {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &failover{ln: ln, backends: backends, conns: map[net.Conn]bool{}}
	go f.serve()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for c := range f.conns {
			c.Close()
		}
	})
	return f
}

func (f *failover) url() string { return "http://" + f.ln.Addr().String() }

func (f *failover) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.pass(c)
	}
}

func (f *failover) track(c net.Conn, open bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if open {
		f.conns[c] = true
	} else {
		delete(f.conns, c)
	}
}

// pass joins a client's connection to the first backend that accepts one,
// passing half-closes on in both directions.
func (f *failover) pass(client net.Conn) {
	defer client.Close()
	var backend net.Conn
	for _, addr := range f.backends {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			backend = c
			break
		}
	}
	if backend == nil {
		return
	}
	defer backend.Close()
	f.track(client, true)
	f.track(backend, true)
	defer f.track(client, false)
	defer f.track(backend, false)
	var both sync.WaitGroup
	copyThenCloseWrite := func(dst, src net.Conn) {
		defer both.Done()
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	both.Add(2)
	go copyThenCloseWrite(backend, client)
	go copyThenCloseWrite(client, backend)
	both.Wait()
}

// follower is a client process following one session's events: the
// TypeScript client (WebSocket or SSE) or the Python client, each printing
// an event per line (testdata/follow.mjs, testdata/follow.py).
type follower struct {
	name   string
	mu     sync.Mutex
	seqs   []int64
	stderr strings.Builder
	exited chan error
}

func (f *follower) received() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.seqs...)
}

func (f *follower) said() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stderr.String()
}

// follow starts a follower process; it stops with the test.
func follow(t *testing.T, name string, cmd *exec.Cmd) *follower {
	f := &follower{name: name, exited: make(chan error, 1)}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var read sync.WaitGroup
	read.Add(2)
	go func() {
		defer read.Done()
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			var ev struct{ Sequence int64 }
			if json.Unmarshal(lines.Bytes(), &ev) != nil {
				continue
			}
			f.mu.Lock()
			f.seqs = append(f.seqs, ev.Sequence)
			f.mu.Unlock()
		}
	}()
	go func() {
		defer read.Done()
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			f.mu.Lock()
			f.stderr.WriteString(lines.Text() + "\n")
			f.mu.Unlock()
		}
	}()
	go func() {
		read.Wait()
		f.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		stdin.Close() // the follower exits when its stdin closes
		select {
		case <-f.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-f.exited
		}
		if t.Failed() {
			t.Logf("%s said:\n%s", f.name, f.said())
		}
	})
	return f
}

// send posts an operation and returns its answer, whatever its status; an
// error is no answer at all (the connection broke).
func send(server, key, query string, vars map[string]any) (*apitest.Response, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, server+"/graphql", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out apitest.Response
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("status %d, not a GraphQL answer: %w", res.StatusCode, err)
	}
	return &out, nil
}

// buildTypeScriptClient installs the TypeScript client's packages when
// needed (npm ci from its lock) and builds it; it returns its entry point.
func buildTypeScriptClient(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("clients", "typescript"))
	require.NoError(t, err)
	run := func(name string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s (node and npm are needed: apt-get install nodejs npm):\n%s", name, strings.Join(args, " "), out)
	}
	testnpm.Locked(t, dir, func() { // the clients package builds it too, at the same time
		lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
		require.NoError(t, err)
		if installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil || installed.ModTime().Before(lock.ModTime()) {
			run("npm", "ci", "--no-audit", "--no-fund")
		}
		if !builtSince(t, filepath.Join(dir, "dist", "src", "index.js"), filepath.Join(dir, "src"), filepath.Join(dir, "tsconfig.json")) {
			run("node", filepath.Join("scripts", "build.mjs"))
		}
	})
	// The followers import dist/ for the whole test, while the clients
	// package may rebuild it (a build removes it first): hold it shared.
	testnpm.Using(t, dir)
	return filepath.Join(dir, "dist", "src", "index.js")
}

// builtSince says whether out exists and is newer than every file under
// the sources named: a build that is current is not done again, so this
// test never removes the dist/ another binary's test is running.
func builtSince(t *testing.T, out string, sources ...string) bool {
	built, err := os.Stat(out)
	if err != nil {
		return false
	}
	newer := false
	for _, src := range sources {
		require.NoError(t, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if info, err := d.Info(); err == nil && info.ModTime().After(built.ModTime()) {
				newer = true
			}
			return nil
		}))
	}
	return !newer
}

// resumes are the lines testdata/follow.mjs writes as it resumes.
var resumes = regexp.MustCompile(`(?m)^resume \d+: `)

// A rolling deploy as it happens: two replicas of the server binary behind
// one address, a writer making acknowledged writes without pause, and a
// session followed by the TypeScript client over WebSocket and over SSE and
// by the Python client, all through the load balancer. Replica A, which
// every client reached first, is sent SIGTERM in the middle of the stream,
// drains and exits, and is started again. Every acknowledged write is in
// the database, every follower receives every event exactly once and in
// order (each resumed on B from its cursor), and no request was answered
// with an error: none CANCELLED, none INTERNAL.
func TestARollingDeployLosesNothing(t *testing.T) {
	entry := buildTypeScriptClient(t)
	// The Python client from the checkout, installed with its dependencies
	// in a venv of its own: the system Python has neither httpx nor websockets.
	python := testpy.Venv(t, filepath.Join("clients", "python", "constraints.txt"), "./"+filepath.Join("clients", "python"))

	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	key, _, err := access.CreateKey(access.System(context.Background()), client.APIKey,
		access.NewKey{Name: "deploy test", Role: apikey.RoleAdmin})
	require.NoError(t, err)

	settings := []string{"DRAIN_DELAY=100ms", "SHUTDOWN_TIMEOUT=20s"}
	a, b := startReplica(t, dsn, settings...), startReplica(t, dsn, settings...)
	lb := newFailover(t, a.addr, b.addr)

	res, err := post(lb.url(), key, `mutation($in: OpenSessionInput!) { openSession(input: $in) { session { id } } }`,
		map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "rolling-deploy"}})
	require.NoError(t, err)
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	require.NoError(t, json.Unmarshal(res.Data, &opened))
	session := opened.OpenSession.Session.ID

	env := slices.Clip(append(os.Environ(), "SG_URL="+lb.url()+"/graphql", "SG_API_KEY="+key, "SG_SESSION="+session, "SG_CLIENT="+entry))
	node := func(transport string) *exec.Cmd {
		cmd := exec.Command("node", filepath.Join("testdata", "follow.mjs"))
		cmd.Env = append(env, "SG_TRANSPORT="+transport)
		return cmd
	}
	py := exec.Command(python, filepath.Join("testdata", "follow.py"))
	py.Env = append(env, "PYTHONDONTWRITEBYTECODE=1")
	followers := []*follower{follow(t, "TypeScript over WebSocket", node("ws")), follow(t, "TypeScript over SSE", node("sse")), follow(t, "Python", py)}
	caughtUp := func(n int) func() bool {
		return func() bool {
			for _, f := range followers {
				if len(f.received()) < n {
					return false
				}
			}
			return true
		}
	}
	// waitUntil polls cond for a minute at most, and stops the test as soon
	// as a follower has exited: none ends by itself.
	waitUntil := func(cond func() bool, what string, args ...any) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			for _, f := range followers {
				select {
				case err := <-f.exited:
					f.exited <- err
					t.Fatalf("%s exited (%v) while waiting until %s:\n%s", f.name, err, fmt.Sprintf(what, args...), f.said())
				default:
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("not within 60s: %s", fmt.Sprintf(what, args...))
			}
			<-tick.C
		}
	}
	waitUntil(caughtUp(1), "every follower receives the session's first event")

	// The writer: one write after another, each a metadata key of its own,
	// sent again after a broken connection (the key makes it idempotent).
	var mu sync.Mutex
	var acknowledged []string
	var answeredErrors []string
	networkErrors := 0
	acked := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acknowledged)
	}
	stop := make(chan struct{})
	written := make(chan struct{})
	go func() {
		defer close(written)
		for n := 0; n < 240; n++ {
			k := fmt.Sprintf("w%03d", n)
			for {
				select {
				case <-stop:
					return
				default:
				}
				answer, err := send(lb.url(), key, `mutation($in: UpdateSessionInput!) { updateSession(input: $in) { session { id } } }`,
					map[string]any{"in": map[string]any{"id": session, "metadata": map[string]any{k: "1"}}})
				mu.Lock()
				switch {
				case err != nil:
					networkErrors++ // no answer: sent again
				case len(answer.Errors) > 0:
					answeredErrors = append(answeredErrors, fmt.Sprintf("%s: %s", answer.Errors[0].Code(), answer.Errors[0].Message))
				default:
					acknowledged = append(acknowledged, k)
				}
				mu.Unlock()
				if err == nil {
					break
				}
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-written
	})

	waitUntil(func() bool { return acked() >= 30 }, "writes are acknowledged")
	waitUntil(caughtUp(10), "the followers are live")

	// The deploy: A drains and exits in the middle of the stream.
	sigterm := time.Now()
	assert.Equal(t, 0, a.terminate(), "replica A exits cleanly after draining")
	t.Logf("replica A drained and exited %s after SIGTERM", time.Since(sigterm).Round(time.Millisecond))
	atStop := acked()
	waitUntil(func() bool { return acked() >= atStop+30 }, "writes go on through replica B")
	a.start()
	atStart := acked()
	waitUntil(func() bool { return acked() >= atStart+30 }, "writes go on with A back")
	close(stop)
	<-written

	// Every acknowledged write is in the database.
	var read struct {
		Session struct{ Metadata map[string]string }
	}
	res, err = post(b.url(), key, `query($id: ID!) { session(id: $id) { metadata } }`, map[string]any{"id": session})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(res.Data, &read))
	mu.Lock()
	for _, k := range acknowledged {
		assert.Equal(t, "1", read.Session.Metadata[k], "the acknowledged write %s is in the database", k)
	}
	assert.Empty(t, answeredErrors, "no request was answered with an error (CANCELLED, INTERNAL, ...)")
	t.Logf("%d writes acknowledged; %d sent again after a broken connection", len(acknowledged), networkErrors)
	mu.Unlock()

	// Every follower receives every event of the session once, in order.
	events, err := client.Event.Query().Where(event.SessionID(uuid.MustParse(session))).Count(access.System(context.Background()))
	require.NoError(t, err)
	waitUntil(caughtUp(events), "every follower catches up with the %d events", events)
	want := make([]int64, events)
	for i := range want {
		want[i] = int64(i + 1)
	}
	for _, f := range followers {
		assert.Equal(t, want, f.received(), "%s: every event exactly once, in order", f.name)
	}
	for _, f := range followers {
		t.Logf("%s: %d events; said: %q", f.name, len(f.received()), f.said())
	}
	// Each TypeScript follower resumed once, for the reason A gave.
	assert.Equal(t, 1, len(resumes.FindAllString(followers[0].said(), -1)), "the WebSocket follower resumed once")
	assert.Contains(t, followers[0].said(), "socket closed 1012", "the WebSocket follower resumed after the 1012 close")
	assert.Equal(t, 1, len(resumes.FindAllString(followers[1].said(), -1)), "the SSE follower resumed once")
	assert.Contains(t, followers[1].said(), "this server is shutting down", "the SSE follower resumed after the going-away event")
}

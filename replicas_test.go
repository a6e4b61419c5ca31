package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // the server's driver
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/event"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// replica is a server process on one PostgreSQL, at a fixed address so that
// it comes back where it was after a kill.
type replica struct {
	t    *testing.T
	addr string
	dsn  string
	env  []string // more settings, as VAR=value
	mu   sync.Mutex
	cmd  *exec.Cmd
	logs bytes.Buffer
}

func startReplica(t *testing.T, dsn string, env ...string) *replica {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &replica{t: t, addr: ln.Addr().String(), dsn: dsn, env: env}
	require.NoError(t, ln.Close())
	r.start()
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			t.Logf("replica %s said:\n%s", r.addr, r.logs.String())
		}
	})
	return r
}

func (r *replica) url() string { return "http://" + r.addr }

// start runs the process and waits until it is ready.
func (r *replica) start() {
	cmd := exec.Command(binaryPath) // the binary TestMain built
	cmd.Env = append(binaryEnv("DATABASE_URL="+r.dsn, "LISTEN_ADDR="+r.addr, "LOG_LEVEL=warn", "REAP_INTERVAL=1h"), r.env...)
	cmd.Stdout, cmd.Stderr = &r.logs, &r.logs
	require.NoError(r.t, cmd.Start())
	r.mu.Lock()
	r.cmd = cmd
	r.mu.Unlock()
	require.Eventually(r.t, func() bool {
		res, err := http.Get(r.url() + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 60*time.Second, 20*time.Millisecond, "replica %s never became ready", r.addr)
}

// kill ends the process at once, as a crash or an OOM kill would.
func (r *replica) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// post sends an operation to a replica; a replica that is down is an error.
func post(server, key, query string, vars map[string]any) (*apitest.Response, error) {
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
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out apitest.Response
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("status %d: %w", res.StatusCode, err)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("%s: %s", out.Errors[0].Code(), out.Errors[0].Message)
	}
	return &out, nil
}

// subscriber follows one subscription across replicas: when its connection
// breaks or its stream ends, it resubscribes on the next replica after the
// cursor of the last event it received.
type subscriber struct {
	query   string
	field   string
	vars    func(cursor any) map[string]any
	cursor  func(ev map[string]any) any
	start   int // the replica it subscribes to first
	mu      sync.Mutex
	got     []map[string]any
	resumes int
}

func (s *subscriber) received() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.got...)
}

func (s *subscriber) run(ctx context.Context, replicas []*replica, key string) {
	var cursor any
	for i := s.start; ctx.Err() == nil; i++ {
		srv := &apitest.Server{URL: replicas[i%len(replicas)].url(), Key: key}
		ws, err := srv.TrySubscribe(s.query, s.vars(cursor))
		if err != nil {
			// A client's pause before it tries the next replica (this one is
			// down): the behaviour under test, not a wait for the test's own work.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		stop := context.AfterFunc(ctx, ws.Close)
		for {
			m, err := ws.TryRead(30 * time.Second)
			if err != nil || m.Type != "next" {
				break // the replica went away, or ended the stream: resume elsewhere
			}
			var res struct{ Data map[string]map[string]any }
			if json.Unmarshal(m.Payload, &res) != nil || res.Data[s.field] == nil {
				break // SUBSCRIBER_TOO_SLOW: a null value, then complete
			}
			ev := res.Data[s.field]
			s.mu.Lock()
			s.got = append(s.got, ev)
			s.mu.Unlock()
			cursor = s.cursor(ev)
		}
		stop()
		ws.Close()
		if ctx.Err() == nil {
			s.mu.Lock()
			s.resumes++
			s.mu.Unlock()
		}
	}
}

// Three sessiongraph processes (the binary TestMain built) on one PostgreSQL, writers and subscribers spread
// over them, and one replica killed in the middle of the stream and started
// again: every subscriber receives every event of what it follows exactly
// once, each session's in order, whichever replica it ends up on; those on
// the killed replica resume elsewhere with their cursor.
func TestThreeReplicasDeliverEveryEventOnceThroughAKill(t *testing.T) {
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	key, _, err := access.CreateKey(access.System(context.Background()), client.APIKey,
		access.NewKey{Name: "replicas test", Role: apikey.RoleAdmin})
	require.NoError(t, err)

	replicas := []*replica{startReplica(t, dsn), startReplica(t, dsn), startReplica(t, dsn)}

	const sessions, writes = 6, 100
	ids := make([]string, sessions)
	for i := range ids {
		var opened struct {
			OpenSession struct{ Session struct{ ID string } } `json:"openSession"`
		}
		res, err := post(replicas[i%3].url(), key, `mutation($in: OpenSessionInput!) { openSession(input: $in) { session { id } } }`,
			map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": fmt.Sprintf("replicas-%d", i)}})
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(res.Data, &opened))
		ids[i] = opened.OpenSession.Session.ID
	}

	// Each session is followed by one subscriber on every replica, and the
	// admin feed by one on every replica.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var subs, feeds []*subscriber
	for i, id := range ids {
		for r := range replicas {
			subs = append(subs, &subscriber{
				query: `subscription($id: ID!, $after: Int) { sessionEvents(sessionID: $id, after: $after) { sequence sessionID kind } }`,
				field: "sessionEvents", start: r + i,
				vars: func(c any) map[string]any {
					if c == nil {
						c = 0
					}
					return map[string]any{"id": id, "after": c}
				},
				cursor: func(ev map[string]any) any { return ev["sequence"] },
			})
		}
	}
	for r := range replicas {
		feeds = append(feeds, &subscriber{
			query: `subscription($after: String) { sessionsChanged(after: $after) { cursor sequence sessionID kind } }`,
			field: "sessionsChanged", start: r,
			vars: func(c any) map[string]any {
				if c == nil {
					c = "" // from the first event
				}
				return map[string]any{"after": c}
			},
			cursor: func(ev map[string]any) any { return ev["cursor"] },
		})
	}
	var following sync.WaitGroup
	for _, s := range append(append([]*subscriber{}, subs...), feeds...) {
		following.Go(func() { s.run(ctx, replicas, key) })
	}

	// Writers spread their writes over the replicas, moving on to the next
	// one when a replica is down.
	var done sync.WaitGroup
	var progress sync.WaitGroup
	progress.Add(sessions)
	for i, id := range ids {
		done.Go(func() {
			var once sync.Once
			defer once.Do(progress.Done) // a writer that gave up does not hold the kill back
			target := i
			for n := range writes {
				if n == writes/3 {
					once.Do(progress.Done)
				}
				for attempt := 0; ; attempt++ {
					_, err := post(replicas[target%3].url(), key, `mutation($in: UpdateSessionInput!) { updateSession(input: $in) { session { id } } }`,
						map[string]any{"in": map[string]any{"id": id, "metadata": map[string]any{"n": fmt.Sprint(n)}}})
					target++
					if err == nil {
						break
					}
					if !assert.Less(t, attempt, 100, "write %d to session %d: %v", n, i, err) {
						return
					}
					time.Sleep(20 * time.Millisecond) // a client's pause before its retry on the next replica
				}
			}
		})
	}
	progress.Wait()
	resumes := func() int {
		n := 0
		for _, s := range subs {
			s.mu.Lock()
			n += s.resumes
			s.mu.Unlock()
		}
		return n
	}
	before := resumes()
	replicas[1].kill() // mid-stream: its subscribers and writers move on
	// It stays down until its subscribers (one per session) have resumed
	// elsewhere, so that they do resume on another replica.
	require.Eventually(t, func() bool { return resumes() >= before+sessions }, 60*time.Second, 10*time.Millisecond,
		"the killed replica's subscribers resume elsewhere")
	replicas[1].start()
	done.Wait()

	// What every subscriber must have received: the events as committed.
	stored := client.Event.Query().Order(event.ByXid(), event.BySessionID(), event.BySequence()).
		AllX(access.System(context.Background()))
	perSession := map[string]int{}
	lifecycle := 0
	for _, ev := range stored {
		perSession[ev.SessionID.String()]++
		if ev.Kind == "session.opened" || ev.Kind == "session.updated" {
			lifecycle++
		}
	}
	require.GreaterOrEqual(t, lifecycle, sessions*(writes+1), "every write committed (a write whose reply the kill lost may have committed twice)")
	require.Eventually(t, func() bool {
		for i, s := range subs {
			if len(s.received()) < perSession[ids[i/3]] {
				return false
			}
		}
		for _, f := range feeds {
			if len(f.received()) < lifecycle {
				return false
			}
		}
		return true
	}, 60*time.Second, 50*time.Millisecond, "every subscriber catches up")
	cancel()
	following.Wait()

	resumed := 0
	for i, s := range subs {
		got := s.received()
		require.Len(t, got, perSession[ids[i/3]], "subscriber %d of session %d", i%3, i/3)
		for n, ev := range got {
			require.Equal(t, float64(n+1), ev["sequence"], "subscriber %d of session %d: every event once, in order", i%3, i/3)
		}
		resumed += s.resumes
	}
	assert.GreaterOrEqual(t, resumed, sessions, "the killed replica's subscribers resumed elsewhere")
	t.Logf("%d events in %d sessions; the session subscribers resumed %d times", len(stored), sessions, resumed)
	for r, f := range feeds {
		got := f.received()
		require.Len(t, got, lifecycle, "feed on replica %d", r)
		next := map[any]float64{}
		for _, ev := range got {
			next[ev["sessionID"]]++
			require.Equal(t, next[ev["sessionID"]], ev["sequence"], "feed on replica %d: each session's events once, in order", r)
		}
	}
}

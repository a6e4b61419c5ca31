package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/testdb"
)

// The doors an operation comes in by, and the protections each must keep
// (docs/DESIGN "One door"). TestEveryDoorKeepsEveryProtection runs a cell
// for each pair, a real request through a real server, and fails on a
// pair without one; TestTheDoorsAreTheServersWaysIn fails on a way in the
// server has that is not one of these doors.
var (
	doors       = []string{"POST", "GET", "SSE", "WebSocket", "MCP"}
	protections = []string{"authentication", "tenant", "role", "rate", "in-flight", "slot", "pool share", "deadline", "UTF-8", "size", "cost"}
)

// The server's ways in: its operation routes, and the GraphQL transports
// (by type), each the door it is; "" runs no operation.
var (
	routeDoors     = map[string][]string{"/graphql": {"POST", "GET", "SSE", "WebSocket"}, "/mcp": {"MCP"}}
	transportDoors = map[string][]string{"*wsproto.Transport": {"WebSocket"}, "graph.sseTransport": {"SSE"},
		"graph.httpTransport": {"GET", "POST"}, "transport.Options": nil, "graph.unsupported": nil}
)

// Every way into the server is a door of the matrix: a route or a GraphQL
// transport added without its row fails here.
func TestTheDoorsAreTheServersWaysIn(t *testing.T) {
	s := apitest.New(t)
	var seen []string
	for route, h := range s.Doors() {
		ds, ok := routeDoors[route]
		require.True(t, ok, "route %s takes operations: give it its doors in routeDoors and its cells", route)
		if route != "/graphql" {
			seen = append(seen, ds...)
			continue
		}
		// gqlgen keeps its transports unexported: their types say which they are.
		ts := reflect.ValueOf(h).Elem().FieldByName("transports")
		require.True(t, ts.IsValid(), "gqlgen's handler.Server keeps its transports elsewhere now")
		for i := range ts.Len() {
			name := ts.Index(i).Elem().Type().String()
			ds, ok := transportDoors[name]
			require.True(t, ok, "transport %s is not a door of the matrix: give it its row", name)
			seen = append(seen, ds...)
		}
	}
	slices.Sort(seen)
	want := slices.Clone(doors)
	slices.Sort(want)
	assert.Equal(t, want, seen)
}

// answer is what a door answered: the first error's code ("" for none; for
// a socket closed on it, "close" and its code), the HTTP status, and the
// Retry-After it gave (header, or extensions.retryAfter).
type answer struct {
	code       string
	status     int
	retryAfter string
}

// door sends the operations of the cells one way in.
type door struct {
	// read reads session id as key; write writes it.
	read, write func(t *testing.T, s *apitest.Server, key, id string) answer
	// notUTF8 sends a read whose text is not UTF-8; tooLarge one over
	// MaxBodyBytes (or the socket's message limit); costly one that would
	// cost more than the limits allow.
	notUTF8, tooLarge, costly func(t *testing.T, s *apitest.Server, key string) answer
}

const (
	// costlyRead costs about 60,000, over -max-complexity (50,000).
	costlyRead   = `{ sessions(first: 100) { edges { node { turns(first: 100) { edges { node { id } } } refs(first: 100) { edges { node { id } } } } } } }`
	readSession  = `query($id: ID!) { session(id: $id) { id } }`
	writeSession = `mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "through the door"}) { session { id } } }`
)

var theDoors = map[string]door{
	"POST": {
		read: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return postJSON(t, s, key, readSession, id, "")
		},
		write: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return postJSON(t, s, key, writeSession, id, "")
		},
		notUTF8:  func(t *testing.T, s *apitest.Server, key string) answer { return postRaw(t, s, key, notUTF8Body, "") },
		tooLarge: func(t *testing.T, s *apitest.Server, key string) answer { return postRaw(t, s, key, largeBody(), "") },
		costly: func(t *testing.T, s *apitest.Server, key string) answer {
			return postJSON(t, s, key, costlyRead, "", "")
		},
	},
	"GET": {
		read: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return get(t, s, key, url.Values{"query": {readSession}, "variables": {`{"id":"` + id + `"}`}})
		},
		// GET runs queries only: a mutation is refused before it is admitted.
		write: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return get(t, s, key, url.Values{"query": {writeSession}, "variables": {`{"id":"` + id + `"}`}})
		},
		notUTF8: func(t *testing.T, s *apitest.Server, key string) answer {
			return get(t, s, key, url.Values{"query": {readSession}, "variables": {`{"id":"\udc00"}`}})
		},
		// A query string is bounded by net/http's header limit (1 MB): 431.
		tooLarge: func(t *testing.T, s *apitest.Server, key string) answer {
			return get(t, s, key, url.Values{"query": {strings.Repeat(" ", 2<<20) + readSession}})
		},
		costly: func(t *testing.T, s *apitest.Server, key string) answer {
			return get(t, s, key, url.Values{"query": {costlyRead}})
		},
	},
	"SSE": {
		read: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return postJSON(t, s, key, readSession, id, sse)
		},
		write: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return postJSON(t, s, key, writeSession, id, sse)
		},
		notUTF8:  func(t *testing.T, s *apitest.Server, key string) answer { return postRaw(t, s, key, notUTF8Body, sse) },
		tooLarge: func(t *testing.T, s *apitest.Server, key string) answer { return postRaw(t, s, key, largeBody(), sse) },
		costly: func(t *testing.T, s *apitest.Server, key string) answer {
			return postJSON(t, s, key, costlyRead, "", sse)
		},
	},
	"WebSocket": {
		read: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return overSocket(t, s, key, payload(readSession, id))
		},
		write: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return overSocket(t, s, key, payload(writeSession, id))
		},
		notUTF8: func(t *testing.T, s *apitest.Server, key string) answer {
			return overSocket(t, s, key, json.RawMessage(`{"query":"`+readSession+`","variables":{"id":"\ud800"}}`))
		},
		// A message over the socket's read limit (1 MB) closes it.
		tooLarge: func(t *testing.T, s *apitest.Server, key string) answer {
			return overSocket(t, s, key, payload(strings.Repeat(" ", 1<<20)+readSession, uuid.NewString()))
		},
		costly: func(t *testing.T, s *apitest.Server, key string) answer {
			return overSocket(t, s, key, payload(costlyRead, ""))
		},
	},
	"MCP": {
		read: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return callTool(t, s, key, `"working_memory","arguments":{"sessionID":"`+id+`"}`)
		},
		write: func(t *testing.T, s *apitest.Server, key, id string) answer {
			return callTool(t, s, key, `"begin_turn","arguments":{"sessionID":"`+id+`","userMessage":"through the door"}`)
		},
		notUTF8: func(t *testing.T, s *apitest.Server, key string) answer {
			return callTool(t, s, key, "\"working_memory\",\"arguments\":{\"sessionID\":\"k\xff\"}")
		},
		tooLarge: func(t *testing.T, s *apitest.Server, key string) answer {
			return callTool(t, s, key, `"working_memory","arguments":{"sessionID":"`+strings.Repeat("a", maxBody)+`"}`)
		},
		// A call is one engine call: what bounds its work is its arguments'
		// shape, checked before it runs.
		costly: func(t *testing.T, s *apitest.Server, key string) answer {
			return callTool(t, s, key, `"working_memory","arguments":{"sessionID":"x","deep":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}`)
		},
	},
}

const (
	sse     = "text/event-stream"
	maxBody = 64 << 10
)

var notUTF8Body = []byte("{\"query\":\"" + readSession + "\",\"variables\":{\"id\":\"k\xff\"}}")

func largeBody() []byte {
	return []byte(`{"query":"` + readSession + `","variables":{"id":"` + strings.Repeat("a", maxBody) + `"}}`)
}

func payload(query, id string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"id": id}})
	return b
}

// cell checks one protection at one door.
type cell func(t *testing.T, w *world, d door, name string)

// world is what the cells share: a server whose limits never bind (but
// for its body size), a session of tenant acme, and keys.
type world struct {
	s                      *apitest.Server
	session                string
	client, reader, globex string
}

// Each protection at each door, as a real request through a real server.
func TestEveryDoorKeepsEveryProtection(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.MaxBodyBytes = maxBody })
	w := &world{s: s, client: s.NewKey(t, "CLIENT", "acme"), reader: s.NewKey(t, "READER", "acme"), globex: s.NewKey(t, "CLIENT", "globex")}
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	s.MustDo(t, `mutation { openSession(input: {tenant: "acme", externalKey: "doors"}) { session { id } } }`, nil, &opened)
	w.session = opened.OpenSession.Session.ID

	for _, p := range protections {
		for _, name := range doors {
			t.Run(p+"/"+name, func(t *testing.T) {
				c, ok := cells[p]
				require.True(t, ok, "protection %q has no cells", p)
				d, ok := theDoors[name]
				require.True(t, ok, "door %q has no way to send", name)
				c(t, w, d, name)
			})
		}
	}
}

var cells = map[string]cell{
	// No key: refused before anything runs (a socket at connection_init).
	"authentication": func(t *testing.T, w *world, d door, name string) {
		want := answer{code: "UNAUTHENTICATED", status: http.StatusUnauthorized}
		if name == "WebSocket" {
			want = answer{code: "close 4403"}
		}
		assert.Equal(t, want, d.read(t, w.s, "", w.session))
	},
	// Another tenant's session is not found, to read or to write.
	"tenant": func(t *testing.T, w *world, d door, name string) {
		assert.Equal(t, "NOT_FOUND", d.read(t, w.s, w.globex, w.session).code)
		if name != "GET" {
			assert.Equal(t, "NOT_FOUND", d.write(t, w.s, w.globex, w.session).code)
		}
	},
	// A READER key reads and does not write.
	"role": func(t *testing.T, w *world, d door, name string) {
		assert.Equal(t, "", d.read(t, w.s, w.reader, w.session).code)
		want := "FORBIDDEN"
		if name == "GET" {
			want = "METHOD_NOT_ALLOWED"
		}
		assert.Equal(t, want, d.write(t, w.s, w.reader, w.session).code)
	},
	// A key over its rate is refused with when to send again.
	"rate": func(t *testing.T, w *world, d door, name string) {
		s := apitest.Replica(t, w.s.DSN, limits(config.Fairness{KeyRate: 1, KeyBurst: 1}))
		key := w.s.NewKey(t, "CLIENT", "acme")
		assert.Equal(t, "", d.read(t, s, key, w.session).code)
		got := d.read(t, s, key, w.session)
		assert.Equal(t, "RATE_LIMITED", got.code)
		assert.Equal(t, "1", got.retryAfter)
		if name == "POST" || name == "GET" {
			assert.Equal(t, http.StatusTooManyRequests, got.status)
		}
	},
	// With an in-flight limit of 2, of twelve reads at once from one key
	// two are admitted (they wait on a lock in the database) and ten are
	// refused at once; the two run once the lock is gone.
	"in-flight": func(t *testing.T, w *world, d door, _ string) {
		s := apitest.Replica(t, w.s.DSN, limits(config.Fairness{KeyInFlight: 2}))
		waiting, unlock := testdb.LockTable(t, w.s.DSN, "sessions")
		answers := make(chan answer, 12)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer unlock()
		for range 12 {
			wg.Go(func() { answers <- d.read(t, s, w.client, w.session) })
		}
		for range 10 {
			assert.Equal(t, "RATE_LIMITED", next(t, answers).code)
		}
		require.Eventually(t, func() bool { return waiting() == 2 }, 20*time.Second, 5*time.Millisecond, "two reads wait on the lock")
		unlock()
		for range 2 {
			assert.Equal(t, "", next(t, answers).code)
		}
	},
	// With one slot for a key, of two reads at once one runs (it waits on a
	// lock) and the other waits for the slot.
	"slot": func(t *testing.T, w *world, d door, _ string) {
		s := apitest.Replica(t, w.s.DSN, limits(config.Fairness{KeyOperations: 1}))
		key := keyID(t, s, w.client)
		waiting, unlock := testdb.LockTable(t, w.s.DSN, "sessions")
		answers := make(chan answer, 2)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer unlock()
		for range 2 {
			wg.Go(func() { answers <- d.read(t, s, w.client, w.session) })
		}
		require.Eventually(t, func() bool { return s.Slots().Running(key) == 1 && s.Slots().Waiting(key) == 1 && waiting() == 1 },
			20*time.Second, 5*time.Millisecond, "one read runs, one waits for the slot")
		unlock()
		for range 2 {
			assert.Equal(t, "", next(t, answers).code)
		}
	},
	// With a key's share of the pool one connection, of two reads at once
	// one is in the database (it waits on a lock) and the other waits for
	// its share without a connection.
	"pool share": func(t *testing.T, w *world, d door, _ string) {
		s := apitest.Replica(t, w.s.DSN, limits(config.Fairness{KeyPoolShare: 25}), func(c *app.Config) { c.MaxOpenConns = 4 })
		waiting, unlock := testdb.LockTable(t, w.s.DSN, "sessions")
		answers := make(chan answer, 2)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer unlock()
		for range 2 {
			wg.Go(func() { answers <- d.read(t, s, w.client, w.session) })
		}
		require.Eventually(t, func() bool { return s.Admission().Shares.Waiting() == 1 && waiting() == 1 },
			20*time.Second, 5*time.Millisecond, "one read is in the database, one waits for its share")
		unlock()
		for range 2 {
			assert.Equal(t, "", next(t, answers).code)
		}
	},
	// A read past the queries' deadline (it waits on a lock) is TIMEOUT.
	"deadline": func(t *testing.T, w *world, d door, _ string) {
		s := apitest.Replica(t, w.s.DSN, func(c *app.Config) { c.QueryTimeout = 300 * time.Millisecond })
		_, unlock := testdb.LockTable(t, w.s.DSN, "sessions")
		defer unlock()
		assert.Equal(t, "TIMEOUT", d.read(t, s, w.client, w.session).code)
	},
	// Text that is not UTF-8 is refused, not replaced (over a socket, the
	// protocol's "Invalid message" close).
	"UTF-8": func(t *testing.T, w *world, d door, name string) {
		want := "BAD_USER_INPUT"
		if name == "WebSocket" {
			want = "close 4400"
		}
		assert.Equal(t, want, d.notUTF8(t, w.s, w.client).code)
	},
	// A request over the size limit is refused before it is read whole.
	"size": func(t *testing.T, w *world, d door, name string) {
		want := answer{code: "REQUEST_TOO_LARGE", status: http.StatusRequestEntityTooLarge}
		switch name {
		case "GET":
			want = answer{code: "", status: http.StatusRequestHeaderFieldsTooLarge}
		case "WebSocket":
			want = answer{code: "close 1009"}
		}
		assert.Equal(t, want, d.tooLarge(t, w.s, w.client))
	},
	// An operation that would cost more than the limits allow is refused
	// before it runs.
	"cost": func(t *testing.T, w *world, d door, name string) {
		want := "QUERY_TOO_COMPLEX"
		if name == "MCP" {
			want = "INPUT_TOO_LARGE"
		}
		assert.Equal(t, want, d.costly(t, w.s, w.client).code)
	},
}

// limits are the apitest server's limits, which never bind, but for f's
// key limits that are set; the pool of 8 is the key's and tenant's whole.
func limits(f config.Fairness) func(*app.Config) {
	return func(c *app.Config) {
		l := &c.Fairness
		if f.KeyRate > 0 {
			l.KeyRate, l.KeyBurst = f.KeyRate, f.KeyBurst
		}
		if f.KeyInFlight > 0 {
			l.KeyInFlight = f.KeyInFlight
		}
		if f.KeyOperations > 0 {
			l.KeyOperations = f.KeyOperations
		}
		l.KeyPoolShare, l.TenantPoolShare = 100, 100
		if f.KeyPoolShare > 0 {
			l.KeyPoolShare = f.KeyPoolShare
		}
		c.MaxOpenConns = 8
		c.TenantLinger = 0
	}
}

// next is the next answer: a guard against a hang, not a measure of time.
func next(t *testing.T, answers <-chan answer) answer {
	t.Helper()
	select {
	case a := <-answers:
		return a
	case <-time.After(20 * time.Second):
		require.FailNow(t, "no answer within 20s")
		return answer{}
	}
}

func keyID(t *testing.T, s *apitest.Server, key string) uuid.UUID {
	t.Helper()
	p, err := s.Keys.Authenticate(context.Background(), key)
	require.NoError(t, err)
	return p.KeyID
}

var client = &http.Client{Timeout: 30 * time.Second}

func postJSON(t *testing.T, s *apitest.Server, key, query, id, accept string) answer {
	body, err := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"id": id}})
	require.NoError(t, err)
	return postRaw(t, s, key, body, accept)
}

func postRaw(t *testing.T, s *apitest.Server, key string, body []byte, accept string) answer {
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return sendAs(t, req, key)
}

func get(t *testing.T, s *apitest.Server, key string, q url.Values) answer {
	req, err := http.NewRequest(http.MethodGet, s.URL+"/graphql?"+q.Encode(), nil)
	require.NoError(t, err)
	return sendAs(t, req, key)
}

// sendAs sends req as key and reads its answer: JSON, or an event stream's
// first event.
func sendAs(t *testing.T, req *http.Request, key string) answer {
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	a := answer{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After")}
	raw, err := io.ReadAll(bufio.NewReader(res.Body))
	require.NoError(t, err)
	if strings.HasPrefix(res.Header.Get("Content-Type"), sse) {
		a.status = 0 // a stream's status says nothing of its operation
		for line := range strings.SplitSeq(string(raw), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				raw = []byte(data)
				break
			}
		}
	}
	if res.StatusCode == http.StatusRequestHeaderFieldsTooLarge {
		return a
	}
	a.code, a.retryAfter = firstError(t, raw, a.retryAfter)
	if a.status == http.StatusOK {
		a.status = 0
	}
	return a
}

// firstError is the code and retryAfter of a GraphQL response's first
// error (the header's retryAfter kept when it has one).
func firstError(t *testing.T, raw []byte, retryAfter string) (string, string) {
	var out struct {
		Errors []struct {
			Extensions struct {
				Code       string `json:"code"`
				RetryAfter *int   `json:"retryAfter"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	if len(out.Errors) == 0 {
		return "", retryAfter
	}
	e := out.Errors[0].Extensions
	if e.RetryAfter != nil && retryAfter == "" {
		retryAfter = fmt.Sprint(*e.RetryAfter)
	}
	return e.Code, retryAfter
}

// overSocket runs one operation on a socket of its own as key, and answers
// its first result, or how the socket closed.
func overSocket(t *testing.T, s *apitest.Server, key string, op json.RawMessage) answer {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	require.NoError(t, err)
	defer conn.CloseNow()
	init := map[string]any{}
	if key != "" {
		init["Authorization"] = "Bearer " + key
	}
	require.NoError(t, wsjson.Write(ctx, conn, apitest.Message{Type: "connection_init", Payload: mustJSON(t, init)}))
	sent := false
	for {
		var m apitest.Message
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			var ce websocket.CloseError
			require.True(t, errors.As(err, &ce), "%v", err)
			return answer{code: fmt.Sprint("close ", int(ce.Code))}
		}
		switch m.Type {
		case "connection_ack":
			if !sent {
				// Written raw: what is not UTF-8 must reach the server as it is.
				// A message over the limit may be cut off as it is written: the
				// close says why.
				b := append(append([]byte(`{"id":"1","type":"subscribe","payload":`), op...), '}')
				_ = conn.Write(ctx, websocket.MessageText, b)
				sent = true
			}
		case "ping":
			require.NoError(t, wsjson.Write(ctx, conn, apitest.Message{Type: "pong"}))
		case "next":
			code, retryAfter := firstError(t, m.Payload, "")
			return answer{code: code, retryAfter: retryAfter}
		case "error":
			code, retryAfter := firstError(t, append(append([]byte(`{"errors":`), m.Payload...), '}'), "")
			return answer{code: code, retryAfter: retryAfter}
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// callTool sends tools/call (its name and arguments given as JSON text,
// byte for byte) as an MCP client does over streamable HTTP, and answers
// the code of its error.
func callTool(t *testing.T, s *apitest.Server, key, params string) answer {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + params + `}}`
	req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	a := answer{status: res.StatusCode}
	if a.status == http.StatusOK {
		a.status = 0
	}
	var reply struct {
		Result *struct {
			IsError bool `json:"isError"`
			Meta    map[string]struct {
				Code       string `json:"code"`
				RetryAfter int    `json:"retryAfter"`
			} `json:"_meta"`
		} `json:"result"`
		Error *struct {
			Data struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
		Errors []struct {
			Extensions struct{ Code string } `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(raw, &reply), "%s", raw)
	switch {
	case len(reply.Errors) > 0: // refused at the HTTP door, as GraphQL is
		a.code = reply.Errors[0].Extensions.Code
	case reply.Error != nil:
		a.code = reply.Error.Data.Code
	case reply.Result != nil && reply.Result.IsError:
		e := reply.Result.Meta["sessiongraph/error"]
		a.code = e.Code
		if e.RetryAfter > 0 {
			a.retryAfter = fmt.Sprint(e.RetryAfter)
		}
	}
	return a
}

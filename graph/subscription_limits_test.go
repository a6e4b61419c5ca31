package graph_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

// withSubscriptionLimits lowers the caps that set is given, leaving the
// others at their defaults.
func withSubscriptionLimits(set func(*config.SubscriptionLimits)) func(*app.Config) {
	return func(c *app.Config) { set(&c.Subscriptions) }
}

// refusedSubscription reads the error message that refuses subscription id
// and returns its one error.
func refusedSubscription(t *testing.T, ws *apitest.WS, id string) apitest.Error {
	t.Helper()
	m := ws.Read(10 * time.Second)
	require.Equal(t, id, m.ID)
	require.Equal(t, "error", m.Type, "payload: %s", m.Payload)
	var errs []apitest.Error
	require.NoError(t, json.Unmarshal(m.Payload, &errs))
	require.Len(t, errs, 1)
	return errs[0]
}

// subscriptionsReach waits until the server counts n client subscriptions.
func subscriptionsReach(t *testing.T, s *apitest.Server, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.ClientSubscriptions() == n }, 10*time.Second, 10*time.Millisecond,
		"want %d subscriptions, have %d", n, s.ClientSubscriptions())
}

func TestASocketAtItsCapIsRefusedTheNextSubscriptionAndStaysOpen(t *testing.T) {
	s := apitest.New(t, withSubscriptionLimits(func(l *config.SubscriptionLimits) { l.PerSocket = 3 }))
	reader := s.WithKey(s.NewKey(t, "READER", "acme"))
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "cap"}).OpenSession.Session.ID
	ws := reader.DialWS(t, nil)
	var ids []string
	for range 3 {
		ids = append(ids, ws.Subscribe(sessionEventsSub, map[string]any{"id": id}))
	}
	subscriptionsReach(t, s, 3)

	over := ws.Subscribe(sessionEventsSub, map[string]any{"id": id})
	refused := refusedSubscription(t, ws, over)
	assert.Equal(t, "SUBSCRIPTION_LIMIT", refused.Code())
	assert.Equal(t, "this WebSocket holds 3 subscriptions, the most one socket may (setting max-subscriptions-per-socket): complete one first, or open another socket", refused.Message)

	// A query is not a subscription: it still runs at the cap.
	q := ws.Subscribe(`{ viewer { role } }`, nil)
	answer := ws.Read(10 * time.Second)
	assert.Equal(t, q, answer.ID)
	assert.JSONEq(t, `{"data":{"viewer":{"role":"READER"}}}`, string(answer.Payload))
	assert.Equal(t, "complete", ws.Read(10*time.Second).Type)

	// Completing one makes room on the same socket, and the subscriptions go on.
	ws.Send(apitest.Message{ID: ids[0], Type: "complete"})
	subscriptionsReach(t, s, 2)
	again := ws.Subscribe(sessionEventsSub, map[string]any{"id": id})
	subscriptionsReach(t, s, 3)
	touch(t, s, id, 1)
	got := map[string]bool{}
	for range 3 {
		m := ws.Read(10 * time.Second)
		require.Equal(t, "next", m.Type, "payload: %s", m.Payload)
		got[m.ID] = true
	}
	assert.Equal(t, map[string]bool{ids[1]: true, ids[2]: true, again: true}, got)
}

func TestAKeyAtItsCapIsRefusedOnEverySocketAndOverSSE(t *testing.T) {
	s := apitest.New(t, withSubscriptionLimits(func(l *config.SubscriptionLimits) { l.PerSocket, l.PerKey = 3, 4 }))
	capped := s.WithKey(s.NewKey(t, "CLIENT", "acme"))
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "key-cap"}).OpenSession.Session.ID
	first := capped.DialWS(t, nil)
	for range 3 {
		first.Subscribe(sessionEventsSub, map[string]any{"id": id})
	}
	second := capped.DialWS(t, nil)
	second.Subscribe(sessionEventsSub, map[string]any{"id": id})
	subscriptionsReach(t, s, 4)

	over := second.Subscribe(sessionEventsSub, map[string]any{"id": id})
	refused := refusedSubscription(t, second, over)
	assert.Equal(t, "SUBSCRIPTION_LIMIT", refused.Code())
	assert.Equal(t, "this API key holds 4 subscriptions on this server, the most one key may (setting max-subscriptions-per-key): complete some first", refused.Message)

	stream := openSSE(t, capped, sessionEventsSub, map[string]any{"id": id})
	ev := nextSSE(t, stream)
	assert.Equal(t, "next", ev.name)
	assert.JSONEq(t, `{"errors":[{"message":"this API key holds 4 subscriptions on this server, the most one key may (setting max-subscriptions-per-key): complete some first","extensions":{"code":"SUBSCRIPTION_LIMIT"}}],"data":null}`, ev.data)
	assert.Equal(t, "complete", nextSSE(t, stream).name)

	// Another key is not held back by this one.
	other := s.WithKey(s.NewKey(t, "CLIENT", "acme")).DialWS(t, nil)
	other.Subscribe(sessionEventsSub, map[string]any{"id": id})
	subscriptionsReach(t, s, 5)

	// A key's SSE streams count too, until they end.
	first.Close()
	subscriptionsReach(t, s, 2)
	sse := openSSE(t, capped, sessionEventsSub, map[string]any{"id": id})
	subscriptionsReach(t, s, 3)
	touch(t, s, id, 1)
	assert.Equal(t, "next", nextSSE(t, sse).name)
}

func TestAReplicaAtItsCapRefusesEveryKey(t *testing.T) {
	s := apitest.New(t, withSubscriptionLimits(func(l *config.SubscriptionLimits) { l.PerReplica = 2 }))
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "replica-cap"}).OpenSession.Session.ID
	ws := s.DialWS(t, nil)
	ws.Subscribe(sessionEventsSub, map[string]any{"id": id})
	openSSE(t, s.WithKey(s.NewKey(t, "READER", "acme")), sessionEventsSub, map[string]any{"id": id})
	subscriptionsReach(t, s, 2)

	other := s.WithKey(s.NewKey(t, "CLIENT", "acme")).DialWS(t, nil)
	refused := refusedSubscription(t, other, other.Subscribe(sessionEventsSub, map[string]any{"id": id}))
	assert.Equal(t, "SUBSCRIPTION_LIMIT", refused.Code())
	assert.Equal(t, "this server holds 2 subscriptions, the most it may (setting max-subscriptions): try again later", refused.Message)
}

package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/event"
	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

const openSession = `mutation($in: OpenSessionInput!) {
  openSession(input: $in) { created replacedSessionID session { id tenant externalKey domain userID status ttlSeconds metadata systemPrompt } }
}`

type openedSession struct {
	OpenSession struct {
		Created           bool    `json:"created"`
		ReplacedSessionID *string `json:"replacedSessionID"`
		Session           struct {
			ID           string            `json:"id"`
			Tenant       string            `json:"tenant"`
			ExternalKey  string            `json:"externalKey"`
			Domain       string            `json:"domain"`
			UserID       string            `json:"userID"`
			Status       string            `json:"status"`
			TTLSeconds   int               `json:"ttlSeconds"`
			Metadata     map[string]string `json:"metadata"`
			SystemPrompt string            `json:"systemPrompt"`
		} `json:"session"`
	} `json:"openSession"`
}

func open(t *testing.T, s *apitest.Server, in map[string]any) openedSession {
	t.Helper()
	var out openedSession
	s.MustDo(t, openSession, map[string]any{"in": in}, &out)
	return out
}

func TestOpenSessionCreatesThenReturnsTheSameSession(t *testing.T) {
	s := apitest.New(t)
	in := map[string]any{"tenant": "acme", "externalKey": "chat-1", "userID": "u1",
		"systemPrompt": "You are a chef.", "ttlSeconds": 3600, "metadata": map[string]any{"channel": "web"}}

	first := open(t, s, in)
	assert.True(t, first.OpenSession.Created)
	got := first.OpenSession.Session
	assert.Equal(t, "acme", got.Tenant)
	assert.Equal(t, "chat-1", got.ExternalKey)
	assert.Equal(t, "kitchen", got.Domain, "the server's default domain")
	assert.Equal(t, "u1", got.UserID)
	assert.Equal(t, "ACTIVE", got.Status)
	assert.Equal(t, 3600, got.TTLSeconds)
	assert.Equal(t, map[string]string{"channel": "web"}, got.Metadata)
	assert.Equal(t, "You are a chef.", got.SystemPrompt)

	again := open(t, s, map[string]any{"tenant": "acme", "externalKey": "chat-1", "userID": "someone-else"})
	assert.False(t, again.OpenSession.Created)
	assert.Equal(t, got.ID, again.OpenSession.Session.ID)
	assert.Equal(t, "u1", again.OpenSession.Session.UserID, "opening again changes nothing")

	other := open(t, s, map[string]any{"tenant": "globex", "externalKey": "chat-1"})
	assert.True(t, other.OpenSession.Created, "the key is per tenant")

	ctx := access.System(context.Background())
	assert.Equal(t, 2, s.Client.Session.Query().CountX(ctx))
	assert.Equal(t, 2, s.Client.Event.Query().Where(event.Kind("session.opened")).CountX(ctx),
		"one event per created session, none for the repeat open")
}

func TestOpenSessionWithTwentyConcurrentCallersMakesOneSession(t *testing.T) {
	s := apitest.New(t)
	const callers = 20
	ids := make([]string, callers)
	created := make([]bool, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			var out openedSession
			s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "race"}}, &out)
			ids[i], created[i] = out.OpenSession.Session.ID, out.OpenSession.Created
		})
	}
	wg.Wait()

	ctx := access.System(context.Background())
	assert.Equal(t, 1, s.Client.Session.Query().CountX(ctx))
	n := 0
	for i := range callers {
		assert.Equal(t, ids[0], ids[i])
		if created[i] {
			n++
		}
	}
	assert.Equal(t, 1, n, "exactly one caller created it")
	assert.Equal(t, 1, s.Client.Event.Query().CountX(ctx))
}

func TestOpenSessionAfterTTLExpiryOpensAFreshSession(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	old := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"}).OpenSession.Session
	// The reaper has not run, but the TTL has passed.
	s.Client.Session.Update().SetExpiresAt(time.Now().Add(-time.Minute)).ExecX(ctx)

	fresh := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"}).OpenSession
	assert.True(t, fresh.Created)
	assert.NotEqual(t, old.ID, fresh.Session.ID)
	require.NotNil(t, fresh.ReplacedSessionID)
	assert.Equal(t, old.ID, *fresh.ReplacedSessionID)
	assert.Equal(t, session.StatusExpired, s.Client.Session.Query().Where(session.ExternalKey("k"), session.StatusEQ(session.StatusExpired)).OnlyX(ctx).Status)
	assert.Equal(t, []string{"session.opened", "session.expired", "session.opened"}, eventKinds(t, s))
}

const updateSession = `mutation($in: UpdateSessionInput!) {
  updateSession(input: $in) { session { id metadata focus { type id context } historySummary ttlSeconds lastActiveAt expiresAt } }
}`

func TestUpdateSessionMergesMetadataAndStampsActivity(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k", "ttlSeconds": 600,
		"metadata": map[string]any{"a": "1", "b": "2"}}).OpenSession.Session.ID

	var out struct {
		UpdateSession struct {
			Session struct {
				Metadata       map[string]string `json:"metadata"`
				Focus          map[string]any    `json:"focus"`
				HistorySummary string            `json:"historySummary"`
				TTLSeconds     int               `json:"ttlSeconds"`
				LastActiveAt   time.Time         `json:"lastActiveAt"`
				ExpiresAt      time.Time         `json:"expiresAt"`
			} `json:"session"`
		} `json:"updateSession"`
	}
	s.MustDo(t, updateSession, map[string]any{"in": map[string]any{
		"id": id, "metadata": map[string]any{"b": "two", "c": "3"}, "removeMetadata": []string{"a"},
		"focus":          map[string]any{"type": "recipe", "id": "recipe_1", "context": map[string]any{"step": 2}},
		"historySummary": "User plans dinners.", "ttlSeconds": 120,
	}}, &out)
	u := out.UpdateSession.Session
	assert.Equal(t, map[string]string{"b": "two", "c": "3"}, u.Metadata)
	assert.Equal(t, map[string]any{"type": "recipe", "id": "recipe_1", "context": map[string]any{"step": float64(2)}}, u.Focus)
	assert.Equal(t, "User plans dinners.", u.HistorySummary)
	assert.Equal(t, 120, u.TTLSeconds)
	assert.Equal(t, 120*time.Second, u.ExpiresAt.Sub(u.LastActiveAt), "expiresAt follows the new TTL")
	assert.Equal(t, []string{"session.opened", "session.updated"}, eventKinds(t, s))
}

// A focus without an id is about a type, no particular entity: its id is
// null, through the mutation's payload, a session read and a compiled page
// alike, never "" (a ref no LLM can resolve).
func TestAFocusWithoutAnIdAnswersNull(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"}).OpenSession.Session.ID
	s.MustDo(t, updateSession, map[string]any{"in": map[string]any{"id": id,
		"focus": map[string]any{"type": "recipe", "id": "recipe_1"}}}, nil)
	for _, focus := range []map[string]any{{"type": "recipe", "id": nil}, {"type": "meal_plan"}} {
		res := s.Do(t, updateSession, map[string]any{"in": map[string]any{"id": id, "focus": focus}})
		require.Empty(t, res.Errors)
		var out struct {
			UpdateSession struct {
				Session struct{ Focus map[string]any } `json:"session"`
			} `json:"updateSession"`
		}
		require.NoError(t, json.Unmarshal(res.Data, &out))
		assert.Equal(t, map[string]any{"type": focus["type"], "id": nil, "context": nil}, out.UpdateSession.Session.Focus)
		for read, vars := range map[string]map[string]any{
			`query($id: ID!) { session(id: $id) { focus { type id } } }`:      {"id": id},
			`{ sessions(first: 1) { edges { node { focus { type id } } } } }`: nil,
		} {
			res := s.Do(t, read, vars)
			require.Empty(t, res.Errors)
			assert.Contains(t, string(res.Data), `"focus":{"type":"`+focus["type"].(string)+`","id":null}`, read)
		}
	}
}

func TestConcurrentMetadataMergesKeepEveryKey(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"}).OpenSession.Session.ID
	const writers = 50
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			s.MustDo(t, updateSession, map[string]any{"in": map[string]any{
				"id": id, "metadata": map[string]any{fmt.Sprintf("k%02d", i): "v"}}}, nil)
		})
	}
	wg.Wait()
	got := s.Client.Session.Query().OnlyX(access.System(context.Background()))
	assert.Len(t, got.Metadata, writers)
	assert.Len(t, eventKinds(t, s), writers+1)
}

func TestWriteToExpiredSessionFailsAndChangesNothing(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"}).OpenSession.Session.ID
	s.Client.Session.Update().SetStatus(session.StatusExpired).SetExpiredAt(time.Now()).ExecX(ctx)
	before := s.Client.Session.Query().OnlyX(ctx)

	res := s.Do(t, updateSession, map[string]any{"in": map[string]any{"id": id, "historySummary": "x"}})
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "SESSION_EXPIRED", res.Errors[0].Code())
	assert.Contains(t, res.Errors[0].Message, "open a new session with the same external key")

	after := s.Client.Session.Query().OnlyX(ctx)
	assert.Equal(t, before.LastActiveAt, after.LastActiveAt, "a failed request is not activity")
	assert.Equal(t, "", after.HistorySummary)
	assert.Equal(t, []string{"session.opened"}, eventKinds(t, s))
}

func TestSessionInputErrorsHaveCodesAndWriteNothing(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"}).OpenSession.Session.ID
	long := make([]byte, 501)
	for i := range long {
		long[i] = 'x'
	}
	cases := []struct {
		name  string
		query string
		vars  map[string]any
		code  string
	}{
		{"empty tenant", openSession, map[string]any{"in": map[string]any{"tenant": "", "externalKey": "k2"}}, "BAD_USER_INPUT"},
		{"key too long", openSession, map[string]any{"in": map[string]any{"tenant": "t", "externalKey": string(long)}}, "INPUT_TOO_LARGE"},
		{"negative ttl", openSession, map[string]any{"in": map[string]any{"tenant": "t", "externalKey": "k", "ttlSeconds": -5}}, "BAD_USER_INPUT"},
		{"metadata not strings", openSession, map[string]any{"in": map[string]any{"tenant": "t", "externalKey": "k", "metadata": map[string]any{"n": 1}}}, "BAD_USER_INPUT"},
		{"malformed id", updateSession, map[string]any{"in": map[string]any{"id": "not-a-uuid", "historySummary": "x"}}, "INVALID_ID"},
		{"unknown session", updateSession, map[string]any{"in": map[string]any{"id": "00000000-0000-4000-8000-000000000000", "historySummary": "x"}}, "NOT_FOUND"},
		{"nothing to update", updateSession, map[string]any{"in": map[string]any{"id": id}}, "BAD_USER_INPUT"},
		{"focus without type", updateSession, map[string]any{"in": map[string]any{"id": id, "focus": map[string]any{"type": ""}}}, "BAD_USER_INPUT"},
		{"malformed id literal", `{ session(id: "123") { id } }`, nil, "INVALID_ID"},
		{"time that is not a time", `{ sessions(where: {createdAtGT: "yesterday"}) { totalCount } }`, nil, "BAD_USER_INPUT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.Do(t, c.query, c.vars)
			require.Len(t, res.Errors, 1, "data: %s", res.Data)
			assert.Equal(t, c.code, res.Errors[0].Code(), res.Errors[0].Message)
			assert.NotEmpty(t, res.Errors[0].Message)
		})
	}
	assert.Equal(t, 1, s.Client.Session.Query().CountX(access.System(context.Background())), "no bad request wrote anything")
	assert.Equal(t, []string{"session.opened"}, eventKinds(t, s))
}

func TestSessionAndSessionByKey(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"}).OpenSession.Session.ID
	var out struct {
		Session      struct{ ID string }  `json:"session"`
		SessionByKey struct{ ID string }  `json:"sessionByKey"`
		Missing      *struct{ ID string } `json:"missing"`
	}
	s.MustDo(t, `query($id: ID!) {
	  session(id: $id) { id }
	  sessionByKey(tenant: "acme", externalKey: "k") { id }
	  missing: sessionByKey(tenant: "acme", externalKey: "nope") { id }
	}`, map[string]any{"id": id}, &out)
	assert.Equal(t, id, out.Session.ID)
	assert.Equal(t, id, out.SessionByKey.ID)
	assert.Nil(t, out.Missing)

	assert.Equal(t, "NOT_FOUND", s.ErrorCode(t, `{ session(id: "00000000-0000-4000-8000-000000000001") { id } }`, nil))
}

// eventKinds lists the kinds of all events in the order of the feed of
// every session, and checks that each session numbers its own 1, 2, 3, …
func eventKinds(t *testing.T, s *apitest.Server) []string {
	t.Helper()
	evs := s.Client.Event.Query().Order(event.ByXid(), event.BySessionID(), event.BySequence()).AllX(access.System(context.Background()))
	kinds := make([]string, len(evs))
	next := map[uuid.UUID]int64{}
	for i, e := range evs {
		kinds[i] = e.Kind
		next[e.SessionID]++
		require.Equal(t, next[e.SessionID], e.Sequence, "a session's sequences are gapless")
	}
	return kinds
}

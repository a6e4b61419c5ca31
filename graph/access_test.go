package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/apikey"
	"sessiongraph/ent/event"
	"sessiongraph/graph/generated"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

// otherTenant is what a CLIENT key of tenant "globex" finds of tenant
// "acme": a full kitchen session with turns, refs and an artifact.
type otherTenant struct {
	s        *apitest.Server
	globex   *apitest.Server // the server, seen with globex's CLIENT key
	session  string
	turn     string
	ref      string
	artifact string
	step     string
	events   int
}

func newOtherTenant(t *testing.T) *otherTenant {
	s := apitest.New(t)
	acme := kitchenSession(t, s)
	o := &otherTenant{s: s, session: acme.id}
	var ids struct {
		Session struct {
			Turns struct {
				Edges []struct{ Node struct{ ID string } }
			}
			Refs struct {
				Edges []struct{ Node struct{ ID string } }
			}
			Artifacts struct {
				Edges []struct{ Node struct{ ID string } }
			}
			StepResults struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { turns(first: 1) { edges { node { id } } }
		refs(first: 1) { edges { node { id } } } artifacts(first: 1) { edges { node { id } } }
		stepResults(first: 1) { edges { node { id } } } } }`,
		map[string]any{"id": acme.id}, &ids)
	o.turn = ids.Session.Turns.Edges[0].Node.ID
	o.ref = ids.Session.Refs.Edges[0].Node.ID
	o.artifact = ids.Session.Artifacts.Edges[0].Node.ID
	o.step = ids.Session.StepResults.Edges[0].Node.ID
	o.events = o.acmeEvents(t)
	o.globex = s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	open(t, o.globex, map[string]any{"tenant": "globex", "externalKey": "own"})
	return o
}

func (o *otherTenant) acmeEvents(t *testing.T) int {
	return o.s.Client.Event.Query().Where(event.Tenant("acme")).CountX(access.System(context.Background()))
}

// Every mutation, aimed at tenant acme's objects by tenant globex's key.
// adminOnly ones answer FORBIDDEN, the rest NOT_FOUND, and nothing changes.
var crossTenantMutations = map[string]struct{ query, code string }{
	"openSession":       {`mutation { openSession(input: {tenant: "acme", externalKey: "kitchen-6"}) { created } }`, "FORBIDDEN"},
	"updateSession":     {`mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "x"}) { session { id } } }`, "NOT_FOUND"},
	"beginTurn":         {`mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "hi"}) { turn { id } } }`, "NOT_FOUND"},
	"updateTurn":        {`mutation($id: ID!) { updateTurn(input: {sessionID: $id, summary: {goal: "x"}}) { turn { id } } }`, "NOT_FOUND"},
	"endTurn":           {`mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "x"}) { turn { id } } }`, "NOT_FOUND"},
	"failTurn":          {`mutation($id: ID!) { failTurn(input: {sessionID: $id, reason: "x"}) { turn { id } } }`, "NOT_FOUND"},
	"recordExchange":    {`mutation($id: ID!) { recordExchange(input: {sessionID: $id, userMessage: "hi", assistantMessage: "x"}) { turn { id } } }`, "NOT_FOUND"},
	"resetConversation": {`mutation($id: ID!) { resetConversation(input: {sessionID: $id}) { session { id } } }`, "NOT_FOUND"},
	"recordRead": {`mutation($id: ID!) { recordRead(input: {sessionID: $id, table: "recipes",
		records: [{id: "0196f1c4-0000-7000-8000-000000000001", name: "x"}]}) { records } }`, "NOT_FOUND"},
	"recordUpdated": {`mutation($id: ID!) { recordUpdated(input: {sessionID: $id, entityType: "recipe",
		records: [{id: "0196f1c4-0000-7000-8000-000000000001", name: "x"}]}) { records } }`, "NOT_FOUND"},
	"recordGenerated": {`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", content: {name: "x"}}) { ref { ref } } }`, "NOT_FOUND"},
	"recordCreated": {`mutation($id: ID!) { recordCreated(input: {sessionID: $id, entityType: "recipe",
		entityID: "0196f1c4-0000-7000-8000-000000000002", label: "x"}) { promoted } }`, "NOT_FOUND"},
	"recordDeleted": {`mutation($id: ID!) { recordDeleted(input: {sessionID: $id, entityType: "recipe",
		entityIDs: ["0196f1c4-0000-7000-8000-000000000001"]}) { refs { ref } } }`, "NOT_FOUND"},
	"recordUserAction": {`mutation($id: ID!) { recordUserAction(input: {sessionID: $id, kind: MENTIONED, entityType: "recipe",
		entityID: "0196f1c4-0000-7000-8000-000000000001", label: "x"}) { ref { ref } } }`, "NOT_FOUND"},
	"mentionEntity":    {`mutation($id: ID!) { mentionEntity(input: {sessionID: $id, refs: ["recipe_1"]}) { refs { ref } } }`, "NOT_FOUND"},
	"updateArtifact":   {`mutation($id: ID!) { updateArtifact(input: {sessionID: $id, ref: "gen_recipe_1", content: {name: "y"}}) { ref { ref } } }`, "NOT_FOUND"},
	"applyEnrichment":  {`mutation($id: ID!) { applyEnrichment(input: {sessionID: $id, labels: [{ref: "ingredient_1", label: "x"}]}) { refs { ref } } }`, "NOT_FOUND"},
	"retainRef":        {`mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_1", reason: "x"}) { ref { ref } } }`, "NOT_FOUND"},
	"releaseRef":       {`mutation($id: ID!) { releaseRef(input: {sessionID: $id, ref: "recipe_1"}) { ref { ref } } }`, "NOT_FOUND"},
	"clearArtifact":    {`mutation($id: ID!) { clearArtifact(input: {sessionID: $id, ref: "gen_recipe_1"}) { ref { ref } } }`, "NOT_FOUND"},
	"recordStepResult": {`mutation($id: ID!) { recordStepResult(input: {sessionID: $id, step: 1, kind: READ, data: [{id: "recipe_1"}]}) { stepResult { step } } }`, "NOT_FOUND"},
	"recordContext":    {`mutation($id: ID!) { recordContext(input: {sessionID: $id, node: THINK}) { receipt { id } } }`, "NOT_FOUND"},
	"recordItems":      {`mutation($id: ID!) { recordItems(input: {sessionID: $id, items: ["{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}"]}) { items { position } } }`, "NOT_FOUND"},
	"recordModelCall": {`mutation($id: ID!) { recordModelCall(input: {sessionID: $id, node: THINK, model: "gpt-4o", inputTokens: 1,
		outputTokens: 1, latencyMs: 1, cost: 0}) { modelCall { id } } }`, "NOT_FOUND"},
	"expireSession":    {`mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, "FORBIDDEN"},
	"expireSessions":   {`mutation { expireSessions(input: {where: {tenant: "acme"}}) { count } }`, "FORBIDDEN"},
	"deleteSession":    {`mutation($id: ID!) { deleteSession(input: {id: $id}) { deletedSessionID } }`, "FORBIDDEN"},
	"purgeExpired":     {`mutation { purgeExpired(input: {olderThanSeconds: 0}) { count } }`, "FORBIDDEN"},
	"upsertEntityType": {`mutation { upsertEntityType(input: {domain: "kitchen", name: "recipe", table: "recipes"}) { entityType { name } } }`, "FORBIDDEN"},
	"createAPIKey":     {`mutation { createAPIKey(input: {name: "x", role: ADMIN}) { key } }`, "FORBIDDEN"},
	"revokeAPIKey":     {`mutation($id: ID!) { revokeAPIKey(input: {id: $id}) { apiKey { id } } }`, "FORBIDDEN"},
}

func TestEveryMutationKeepsToTheKeysTenant(t *testing.T) {
	o := newOtherTenant(t)
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	for _, f := range schema.Mutation.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		assert.Contains(t, crossTenantMutations, f.Name, "a new mutation needs its cross-tenant case here")
	}
	for name, m := range crossTenantMutations {
		t.Run(name, func(t *testing.T) {
			res := o.globex.Do(t, m.query, map[string]any{"id": o.session})
			require.Len(t, res.Errors, 1, "data: %s", res.Data)
			assert.Equal(t, m.code, res.Errors[0].Code(), res.Errors[0].Message)
		})
	}
	assert.Equal(t, o.events, o.acmeEvents(t), "no mutation changed tenant acme's session")
	var still struct{ Session struct{ Status string } }
	o.s.MustDo(t, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": o.session}, &still)
	assert.Equal(t, "ACTIVE", still.Session.Status)
}

func TestAnotherTenantsObjectsAreNotFound(t *testing.T) {
	o := newOtherTenant(t)
	vars := map[string]any{"id": o.session}

	t.Run("session", func(t *testing.T) {
		assert.Equal(t, "NOT_FOUND", o.globex.ErrorCode(t, `query($id: ID!) { session(id: $id) { id } }`, vars))
	})
	t.Run("sessionByKey", func(t *testing.T) {
		var out struct{ SessionByKey *struct{ ID string } }
		o.globex.MustDo(t, `{ sessionByKey(tenant: "acme", externalKey: "kitchen-6") { id } }`, nil, &out)
		assert.Nil(t, out.SessionByKey)
	})
	t.Run("sessions", func(t *testing.T) {
		var out struct {
			Sessions struct {
				TotalCount int
				Edges      []struct{ Node struct{ Tenant string } }
			}
		}
		o.globex.MustDo(t, `{ sessions { totalCount edges { node { tenant } } } }`, nil, &out)
		require.Equal(t, 1, out.Sessions.TotalCount, "only globex's own session")
		assert.Equal(t, "globex", out.Sessions.Edges[0].Node.Tenant)
		o.s.MustDo(t, `{ sessions { totalCount } }`, nil, &out)
		assert.Equal(t, 2, out.Sessions.TotalCount, "an admin key sees every tenant")
	})
	for name, id := range map[string]string{"session": o.session, "turn": o.turn, "ref": o.ref, "artifact": o.artifact, "step result": o.step} {
		t.Run("node of a "+name, func(t *testing.T) {
			assert.Equal(t, "NOT_FOUND", o.globex.ErrorCode(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}))
			res := o.globex.Do(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []string{id}})
			require.NotEmpty(t, res.Errors)
			assert.Equal(t, "NOT_FOUND", res.Errors[0].Code())
			assert.Empty(t, o.s.Do(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}).Errors,
				"the admin key finds it: it exists")
		})
	}
	t.Run("apiKeys", func(t *testing.T) {
		assert.Equal(t, "FORBIDDEN", o.globex.ErrorCode(t, `{ apiKeys { totalCount } }`, nil))
	})
}

func TestEverySubscriptionKeepsToTheKeysTenant(t *testing.T) {
	o := newOtherTenant(t)
	ws := o.globex.DialWS(t, nil)
	for _, q := range []string{
		`subscription($id: ID!) { sessionEvents(sessionID: $id, after: 0) { sequence } }`,
		`subscription($id: ID!) { entityChanges(sessionID: $id, after: 0) { sequence } }`,
		`subscription($id: ID!) { contextUpdated(sessionID: $id, node: THINK) { tokenCount } }`,
	} {
		sub := ws.Subscribe(q, map[string]any{"id": o.session})
		// gqlgen answers a subscription whose resolver fails with one
		// result that holds the error, then completes it.
		m := ws.Read(10 * time.Second)
		require.Equal(t, "next", m.Type, "%s: %s", q, m.Payload)
		require.Equal(t, sub, m.ID)
		var res struct {
			Data   map[string]any
			Errors []apitest.Error
		}
		require.NoError(t, json.Unmarshal(m.Payload, &res))
		require.Len(t, res.Errors, 1, q)
		assert.Equal(t, "NOT_FOUND", res.Errors[0].Code(), q)
		assert.Empty(t, res.Data, "no data")
		assert.Equal(t, "complete", ws.Read(10*time.Second).Type)
	}

	// sessionsChanged replays from the start (the empty cursor): globex
	// sees its own session open, and none of acme's events.
	ws.Subscribe(`subscription { sessionsChanged(after: "") { tenant kind } }`, nil)
	first := nextEvent(t, ws, "sessionsChanged")
	assert.Equal(t, "session.opened", first.Kind)
	o.s.MustDo(t, `mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "acme only"}) { session { id } } }`,
		map[string]any{"id": o.session}, nil)
	open(t, o.globex, map[string]any{"tenant": "globex", "externalKey": "second"})
	second := nextEvent(t, ws, "sessionsChanged")
	assert.Equal(t, "session.opened", second.Kind, "acme's update was not delivered to globex")
	var tenants []string
	for _, e := range []liveEvent{first, second} {
		tenants = append(tenants, e.Tenant)
	}
	assert.Equal(t, []string{"globex", "globex"}, tenants)
	checkSchemaSubscriptions(t)
}

// checkSchemaSubscriptions fails when a subscription is added without a
// tenant check in the test above.
func checkSchemaSubscriptions(t *testing.T) {
	covered := map[string]bool{"sessionEvents": true, "entityChanges": true, "contextUpdated": true, "sessionsChanged": true}
	for _, f := range generated.NewExecutableSchema(generated.Config{}).Schema().Subscription.Fields {
		if !strings.HasPrefix(f.Name, "__") {
			assert.True(t, covered[f.Name], "subscription %s needs a cross-tenant case", f.Name)
		}
	}
}

func TestRequestsWithoutAValidKeyAreRefused(t *testing.T) {
	s := apitest.New(t)
	revoked := s.NewKey(t, "CLIENT", "acme")
	var row struct{ Viewer struct{ Name string } }
	s.WithKey(revoked).MustDo(t, `{ viewer { name } }`, nil, &row)
	var keys struct {
		APIKeys struct {
			Edges []struct{ Node struct{ ID, Name string } }
		} `json:"apiKeys"`
	}
	s.MustDo(t, `{ apiKeys(where: {role: CLIENT}) { edges { node { id name } } } }`, nil, &keys)
	require.Len(t, keys.APIKeys.Edges, 1)
	s.MustDo(t, `mutation($id: ID!) { revokeAPIKey(input: {id: $id}) { apiKey { revokedAt } } }`, map[string]any{"id": keys.APIKeys.Edges[0].Node.ID}, nil)

	for name, key := range map[string]string{"no key": "", "a wrong key": "sg_notakey", "not ours": "abc", "a revoked key": revoked} {
		t.Run(name, func(t *testing.T) {
			res := s.WithKey(key).Do(t, `{ sessions { totalCount } }`, nil)
			assert.Equal(t, http.StatusUnauthorized, res.Status)
			require.Len(t, res.Errors, 1)
			assert.Equal(t, "UNAUTHENTICATED", res.Errors[0].Code())
			assert.NotEmpty(t, res.Errors[0].Message)
			assert.Nil(t, res.Data)
			assert.Equal(t, http.StatusUnauthorized, s.WithKey(key).Get(t, `{ __typename }`).Status)
		})
	}
	t.Run("WebSocket", func(t *testing.T) {
		for name, payload := range map[string]map[string]any{
			"no key": nil, "a wrong key": {"Authorization": "Bearer sg_wrong"},
			"no scheme": {"Authorization": "sg_wrong"}, "a revoked key": {"Authorization": "Bearer " + revoked},
		} {
			assert.Equal(t, websocket.StatusCode(4403), initStatus(t, s, payload), name)
		}
	})
	t.Run("a valid key in connection_init", func(t *testing.T) {
		ws := s.WithKey("").DialWS(t, map[string]any{"Authorization": "Bearer " + s.AdminKey})
		ws.Close()
	})
}

// initStatus opens a WebSocket, sends connection_init with payload and
// returns the close code the server answers with.
func initStatus(t *testing.T, s *apitest.Server, payload map[string]any) websocket.StatusCode {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	require.NoError(t, err)
	defer conn.CloseNow()
	require.NoError(t, wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": payload}))
	var m map[string]any
	err = wsjson.Read(ctx, conn, &m)
	require.Error(t, err, "the server acknowledged: %v", m)
	return websocket.CloseStatus(err)
}

func TestRolesDecideWhatAKeyMayDo(t *testing.T) {
	s := apitest.New(t)
	open(t, s, map[string]any{"tenant": "acme", "externalKey": "k"})
	reader := s.WithKey(s.NewKey(t, "READER", "acme"))
	client := s.WithKey(s.NewKey(t, "CLIENT", "acme"))

	var who struct{ Viewer struct{ Role, Tenant string } }
	reader.MustDo(t, `{ viewer { role tenant } }`, nil, &who)
	assert.Equal(t, "READER", who.Viewer.Role)
	assert.Equal(t, "acme", who.Viewer.Tenant)

	var page struct{ Sessions struct{ TotalCount int } }
	reader.MustDo(t, `{ sessions { totalCount } }`, nil, &page)
	assert.Equal(t, 1, page.Sessions.TotalCount, "a READER reads its tenant")
	assert.Equal(t, "FORBIDDEN", reader.ErrorCode(t, `mutation { openSession(input: {tenant: "acme", externalKey: "r"}) { created } }`, nil),
		"a READER runs no mutation")

	opened := open(t, client, map[string]any{"tenant": "acme", "externalKey": "c"})
	assert.True(t, opened.OpenSession.Created, "a CLIENT writes its tenant")
	assert.Equal(t, "FORBIDDEN", client.ErrorCode(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`,
		map[string]any{"id": opened.OpenSession.Session.ID}), "admin mutations need an ADMIN key, even in its own tenant")
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": opened.OpenSession.Session.ID}, nil)
}

func TestCreatedKeysAreShownOnceAndStoredAsHashes(t *testing.T) {
	s := apitest.New(t)
	var out struct {
		CreateAPIKey struct {
			Key    string
			APIKey struct{ ID, Prefix, Role, Tenant string } `json:"apiKey"`
		} `json:"createAPIKey"`
	}
	s.MustDo(t, `mutation { createAPIKey(input: {name: "runtime", role: CLIENT, tenant: "acme"}) { key apiKey { id prefix role tenant } } }`, nil, &out)
	key := out.CreateAPIKey.Key
	require.True(t, strings.HasPrefix(key, "sg_"))
	assert.True(t, strings.HasPrefix(key, out.CreateAPIKey.APIKey.Prefix))
	assert.Equal(t, "CLIENT", out.CreateAPIKey.APIKey.Role)

	var stored int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM api_keys WHERE hash = $1 OR prefix = $1 OR name = $1`, key).Scan(&stored))
	assert.Zero(t, stored, "the key itself is stored nowhere")
	row := s.Client.APIKey.Query().Where(apikey.Name("runtime")).OnlyX(access.System(context.Background()))
	assert.Len(t, row.Hash, 64, "a SHA-256 hash")

	var who struct{ Viewer struct{ Name string } }
	s.WithKey(key).MustDo(t, `{ viewer { name } }`, nil, &who)
	assert.Equal(t, "runtime", who.Viewer.Name)

	var newest struct {
		APIKeys struct {
			Edges []struct{ Node struct{ Name string } }
		} `json:"apiKeys"`
	}
	s.MustDo(t, `{ apiKeys(first: 1) { edges { node { name } } } }`, nil, &newest)
	require.Len(t, newest.APIKeys.Edges, 1)
	assert.Equal(t, "runtime", newest.APIKeys.Edges[0].Node.Name, "newest first by default")

	for _, bad := range []string{
		`mutation { createAPIKey(input: {name: "x", role: CLIENT}) { key } }`,
		`mutation { createAPIKey(input: {name: "x", role: ADMIN, tenant: "acme"}) { key } }`,
		`mutation { createAPIKey(input: {name: " ", role: READER, tenant: "acme"}) { key } }`,
	} {
		assert.Equal(t, "BAD_USER_INPUT", s.ErrorCode(t, bad, nil), bad)
	}
}

// keyID returns the id of the one key of role in the server's database.
func keyID(t *testing.T, s *apitest.Server, role string) string {
	t.Helper()
	var keys struct {
		APIKeys struct {
			Edges []struct{ Node struct{ ID string } }
		} `json:"apiKeys"`
	}
	s.MustDo(t, `query($role: APIKeyRole!) { apiKeys(where: {role: $role}) { edges { node { id } } } }`, map[string]any{"role": role}, &keys)
	require.Len(t, keys.APIKeys.Edges, 1)
	return keys.APIKeys.Edges[0].Node.ID
}

func TestARepeatRequestCostsNoStatementForItsKey(t *testing.T) {
	s := apitest.New(t)
	client := s.WithKey(s.NewKey(t, "CLIENT", "acme"))
	var who struct{ Viewer struct{ Name string } }
	client.MustDo(t, `{ viewer { name } }`, nil, &who) // looks the key up
	before := s.Statements()
	client.MustDo(t, `{ viewer { name } }`, nil, &who)
	assert.Equal(t, int64(0), s.Statements()-before, "the key came from the cache, and viewer reads nothing")
}

func TestARevocationOnOneReplicaReachesEveryReplica(t *testing.T) {
	a := apitest.New(t)
	b := apitest.Replica(t, a.DSN)
	key := a.NewKey(t, "CLIENT", "acme")
	var who struct{ Viewer struct{ Name string } }
	a.WithKey(key).MustDo(t, `{ viewer { name } }`, nil, &who)
	b.WithKey(key).MustDo(t, `{ viewer { name } }`, nil, &who)
	feed := a.DialWS(t, nil)
	defer feed.Close()
	feed.Subscribe(`subscription { sessionsChanged { kind } }`, nil)
	// The revocation must come through even after A's hub lost its LISTEN
	// connection (it catches up from the table when it reconnects).
	_, err := a.DB.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
	require.NoError(t, err)

	b.MustDo(t, `mutation($id: ID!) { revokeAPIKey(input: {id: $id}) { apiKey { id } } }`, map[string]any{"id": keyID(t, b, "CLIENT")}, nil)
	assert.Equal(t, http.StatusUnauthorized, b.WithKey(key).Get(t, `{ viewer { name } }`).Status, "refused at once where it was revoked")
	require.Eventually(t, func() bool {
		return a.WithKey(key).Get(t, `{ viewer { name } }`).Status == http.StatusUnauthorized
	}, 10*time.Second, 10*time.Millisecond, "refused on the other replica once its hub read the revocation")

	// The revocation is an event of no session: the admin feed and the
	// sessions' events never show it.
	opened := open(t, a, map[string]any{"tenant": "acme", "externalKey": "after-revoke"})
	assert.Equal(t, "session.opened", nextEvent(t, feed, "sessionsChanged").Kind, "the revocation was not delivered")
	var evs struct {
		Session struct {
			Events struct {
				Edges []struct{ Node struct{ Kind string } }
			}
		}
	}
	a.MustDo(t, `query($id: ID!) { session(id: $id) { events { edges { node { kind } } } } }`,
		map[string]any{"id": opened.OpenSession.Session.ID}, &evs)
	require.Len(t, evs.Session.Events.Edges, 1)
	assert.Equal(t, "session.opened", evs.Session.Events.Edges[0].Node.Kind)
	assert.Equal(t, 1, a.Client.Event.Query().Where(event.Kind("apikey.revoked")).CountX(access.System(context.Background())))
}

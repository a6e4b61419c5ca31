package graph_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// sessionKeys runs a sessions query selecting externalKey (and more) and
// returns the keys, sorted.
func sessionKeys(t *testing.T, s *apitest.Server, where, selection string) []string {
	t.Helper()
	var out struct {
		Sessions struct {
			Edges []struct {
				Node struct {
					ExternalKey string `json:"externalKey"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"sessions"`
	}
	s.MustDo(t, `{ sessions(first: 50, where: `+where+`) { edges { node { `+selection+` } } } }`, nil, &out)
	keys := []string{}
	for _, e := range out.Sessions.Edges {
		keys = append(keys, e.Node.ExternalKey)
	}
	sort.Strings(keys)
	return keys
}

// A client finds turns, and sessions through hasTurnsWith, by what their
// recorded items say: a tool's name, a call's arguments, its output, any
// message's text, in any case; compiled pages (plain fields) and gqlgen's
// (a field with a resolver) answer the same, and another tenant finds none.
func TestTurnsAndSessionsAreFoundByWhatTheirItemsSay(t *testing.T) {
	s := apitest.New(t)
	weather := newAgent(t, s, "weather")
	weather.turn("hello")
	weather.turn("What's the weather?")
	weather.do(recordItems, map[string]any{"items": agentsSDKItems[:2]}) // get_weather {"city":"Paris"}, "18°C and sunny <dry>"
	pantry := newAgent(t, s, "pantry")
	pantry.turn("What is on the top shelf?")
	pantry.do(recordItems, map[string]any{"items": typescriptSDKItems[1:]}) // pantry {"shelf":"top"}, "red lentils", "Dal."
	istanbul := newAgent(t, s, "istanbul")
	istanbul.turn("plan a trip")
	istanbul.do(recordItems, map[string]any{"items": []string{`{"role":"developer","content":"The user lives in İzmir."}`}})
	// Said only in a turn's own messages: itemContainsFold does not look there.
	said := newAgent(t, s, "said")
	said.turn("is it sunny in Paris? get_weather please")

	for filter, want := range map[string][]string{
		`{hasTurnsWith: [{itemContainsFold: "GET_WEATHER"}]}`:                                       {"weather"},  // a tool's name
		`{hasTurnsWith: [{itemContainsFold: "paris"}]}`:                                             {"weather"},  // a call's arguments
		`{hasTurnsWith: [{itemContainsFold: "SUNNY <DRY"}]}`:                                        {"weather"},  // its output
		`{hasTurnsWith: [{itemContainsFold: "lentils"}]}`:                                           {"pantry"},   // the TypeScript SDK's output
		`{hasTurnsWith: [{itemContainsFold: "dal."}]}`:                                              {"pantry"},   // an assistant message
		`{hasTurnsWith: [{itemContainsFold: "İZMIR"}]}`:                                             {"istanbul"}, // a developer message, İ as itself
		`{hasTurnsWith: [{itemContainsFold: "izmir"}]}`:                                             {},           // i is not İ
		`{hasTurnsWith: [{itemContainsFold: "100%"}]}`:                                              {},           // LIKE's wildcards are text
		`{hasTurnsWith: [{itemContainsFold: "top"}]}`:                                               {"pantry"},
		`{hasTurnsWith: [{or: [{itemContainsFold: "sunny"}, {userMessageContainsFold: "sunny"}]}]}`: {"said", "weather"},
		`{not: {hasTurnsWith: [{itemContainsFold: "e"}]}}`:                                          {"said"},
	} {
		for _, selection := range []string{"externalKey", "externalKey modelCallTotals { calls }"} {
			assert.Equal(t, want, sessionKeys(t, s, filter, selection), "%s, selecting %s", filter, selection)
		}
	}

	// A session's turns by their items.
	var turns struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct{ Number int } `json:"node"`
				} `json:"edges"`
			} `json:"turns"`
		} `json:"session"`
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { turns(first: 10, where: {itemContainsFold: "Sunny"}) { edges { node { number } } } } }`,
		map[string]any{"id": weather.id}, &turns)
	require.Len(t, turns.Session.Turns.Edges, 1)
	assert.Equal(t, 2, turns.Session.Turns.Edges[0].Node.Number)

	globex := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	assert.Empty(t, sessionKeys(t, globex, `{hasTurnsWith: [{itemContainsFold: "paris"}]}`, "externalKey"), "another tenant's items are not searched")
	reader := s.WithKey(s.NewKey(t, "READER", "acme"))
	assert.Equal(t, []string{"weather"}, sessionKeys(t, reader, `{hasTurnsWith: [{itemContainsFold: "paris"}]}`, "externalKey"))

	// A pattern over the limit is refused as every search pattern is.
	res := s.Do(t, `query($w: SessionWhereInput) { sessions(first: 1, where: $w) { totalCount } }`,
		map[string]any{"w": map[string]any{"hasTurnsWith": []any{map[string]any{"itemContainsFold": strings.Repeat("a", engine.MaxPatternBytes+1)}}}})
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "INPUT_TOO_LARGE", res.Errors[0].Code())
	assert.Equal(t, "where.hasTurnsWith[0].itemContainsFold", res.Errors[0].Extensions["field"])
	// Text PostgreSQL cannot hold is refused at the door, as in every filter.
	assert.Equal(t, "BAD_USER_INPUT", s.ErrorCode(t, `query($w: SessionWhereInput) { sessions(first: 1, where: $w) { totalCount } }`,
		map[string]any{"w": map[string]any{"hasTurnsWith": []any{map[string]any{"itemContainsFold": "a\u0000b"}}}}))
}

// On a grown table of items, the search reads the trigram indexes of the
// items' text, name and arguments, not every item: the statement the
// server sends for the session list's search is EXPLAINed with its
// arguments.
func TestASearchOfManyItemsUsesTheTrigramIndexes(t *testing.T) {
	rec := &apitest.Recorder{}
	s := apitest.New(t, apitest.Recording(rec))
	a := newAgent(t, s, "seed")
	a.turn("seed")
	a.do(recordItems, map[string]any{"items": agentsSDKItems[:2]})
	db, err := sql.Open("pgx", s.DSN)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	// 2,000 sessions of 20 turns with 3 items each: 40,000 turns and
	// 120,000 items, each its own text, tool name and arguments.
	_, err = db.ExecContext(ctx, `INSERT INTO sessions (id, tenant, external_key, user_id, domain, ref_counters,
			gen_counters, metadata, ttl_seconds, created_at, updated_at, last_active_at, expires_at, current_turn)
		SELECT gen_random_uuid(), s.tenant, 'grown-' || g, 'user-' || g, s.domain, s.ref_counters,
			s.gen_counters, s.metadata, s.ttl_seconds, s.created_at, s.updated_at, s.last_active_at, s.expires_at, 20
		FROM sessions s, generate_series(1, 2000) g WHERE s.external_key = 'seed'`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO turns (id, session_id, number, user_message, item_count, status, started_at)
		SELECT gen_random_uuid(), id, n, 'question ' || n, 3, 'COMPLETED', now()
		FROM sessions, generate_series(1, 20) n WHERE external_key LIKE 'grown-%'`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO turn_items (id, session_id, turn, position, kind, name, call_id, arguments, content, json, created_at)
		SELECT gen_random_uuid(), t.session_id, t.number, p, 'FUNCTION_CALL', 'tool_' || md5(t.id::text || p), 'call_' || p,
			'{"q":"' || md5(p || t.id::text) || '"}', 'output ' || md5(t.session_id::text || t.number || p), '{}', now()
		FROM turns t, generate_series(1, 3) p WHERE t.user_message LIKE 'question %'`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `VACUUM ANALYZE sessions, turns, turn_items`)
	require.NoError(t, err)

	stmts := rec.Record(func() {
		assert.Equal(t, []string{"seed"}, sessionKeys(t, s, `{hasTurnsWith: [{itemContainsFold: "get_weathe"}]}`, "externalKey"))
	})
	searched := 0
	for _, st := range stmts {
		if !strings.Contains(st.Query, "turn_items") {
			continue
		}
		searched++
		var raw []byte
		require.NoError(t, db.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+st.Query, st.Args...).Scan(&raw))
		var plans []struct {
			Plan planNode `json:"Plan"`
		}
		require.NoError(t, json.Unmarshal(raw, &plans))
		text := string(raw)
		for _, index := range []string{"turn_item_content_trgm", "turn_item_name_trgm", "turn_item_arguments_trgm"} {
			assert.Contains(t, text, index, "the search reads %s:\n%s", index, text)
		}
		// The sessions of this small database may be read whole (2,001
		// rows hash faster than they are looked up); the turns and items
		// the search adds never are.
		assert.Empty(t, seqScans(plans[0].Plan, "turns", "turn_items"), "the search reads no turn or item table whole:\n%s", text)
	}
	assert.Equal(t, 1, searched, "one statement searches the items")
}

// seqScans names the sequential scans of the tables in a plan.
func seqScans(n planNode, tables ...string) []string {
	var out []string
	if n.NodeType == "Seq Scan" && slices.Contains(tables, n.Relation) {
		out = append(out, n.Relation)
	}
	for _, c := range n.Plans {
		out = append(out, seqScans(c, tables...)...)
	}
	return out
}

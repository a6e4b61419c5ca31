package graph_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// agent drives one session the way an agent runtime does.
type agent struct {
	t  *testing.T
	s  *apitest.Server
	id string
}

func newAgent(t *testing.T, s *apitest.Server, key string) *agent {
	t.Helper()
	var out openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": key}}, &out)
	return &agent{t: t, s: s, id: out.OpenSession.Session.ID}
}

// turn ends the open turn, if any, and begins the next.
func (a *agent) turn(message string) {
	a.t.Helper()
	res := a.s.Do(a.t, `mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "ok"}) { turn { number } } }`, map[string]any{"id": a.id})
	if len(res.Errors) > 0 {
		require.Equal(a.t, "NO_OPEN_TURN", res.Errors[0].Code())
	}
	a.s.MustDo(a.t, `mutation($id: ID!, $m: String!) { beginTurn(input: {sessionID: $id, userMessage: $m}) { turn { number } } }`,
		map[string]any{"id": a.id, "m": message}, nil)
}

// do runs an operation with $id bound to the session and returns its data.
func (a *agent) do(query string, vars map[string]any) json.RawMessage {
	a.t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	vars["id"] = a.id
	res := a.s.Do(a.t, query, vars)
	require.Empty(a.t, res.Errors, "operation failed")
	assertNoUUIDs(a.t, res.Data)
	return res.Data
}

// code runs an operation that must fail and returns its error code.
func (a *agent) code(query string, vars map[string]any) string {
	a.t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	vars["id"] = a.id
	return a.s.ErrorCode(a.t, query, vars)
}

type refOut struct {
	Ref                string  `json:"ref"`
	EntityType         string  `json:"entityType"`
	EntityID           *string `json:"entityID"`
	Label              string  `json:"label"`
	Action             string  `json:"action"`
	DetailLevel        *string `json:"detailLevel"`
	FullTurn           *int    `json:"fullTurn"`
	TurnCreated        int     `json:"turnCreated"`
	TurnLastReferenced int     `json:"turnLastReferenced"`
	TurnPromoted       *int    `json:"turnPromoted"`
	ActiveReason       *string `json:"activeReason"`
	Artifact           *struct {
		Status   string         `json:"status"`
		Revision int            `json:"revision"`
		Content  map[string]any `json:"content"`
		Label    string         `json:"label"`
	} `json:"artifact"`
}

const refFields = `ref entityType entityID label action detailLevel fullTurn turnCreated turnLastReferenced turnPromoted activeReason artifact { status revision content label }`

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

var uuidShape = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// assertNoUUIDs walks a response and fails on any UUID-shaped text outside
// the fields meant for the runtime (entityID, and node ids such as a
// receipt's receiptID).
func assertNoUUIDs(t *testing.T, raw json.RawMessage) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch val := v.(type) {
		case string:
			if uuidShape.MatchString(val) {
				t.Errorf("UUID-shaped text at %s: %q", path, val)
			}
		case []any:
			for _, item := range val {
				walk(path+"[]", item)
			}
		case map[string]any:
			for k, item := range val {
				if k == "entityID" || k == "entityIDs" || k == "receiptID" || k == "id" && !isTranslated(path) {
					continue
				}
				walk(path+"."+k, item)
			}
		}
	}
	walk("data", v)
}

// isTranslated tells LLM-facing record maps (where id must be a ref) from
// GraphQL objects (whose id is a node id).
func isTranslated(path string) bool {
	return regexp.MustCompile(`\.(records|data|content)(\[\])?(\.|$)`).MatchString(path)
}

func newUUID() string { return uuid.NewString() }

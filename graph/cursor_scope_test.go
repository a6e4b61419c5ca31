package graph_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/graph/generated"
	"sessiongraph/internal/apitest"
)

// connectionOrders gives every connection field of the schema two orderBy
// values that page the same rows in different orders. The test below
// enumerates the connection fields from the parsed schema and fails for
// one missing here, so a new connection cannot escape it.
var connectionOrders = map[string][2]any{
	"Query.sessions": {
		[]any{map[string]any{"field": "CREATED_AT"}},
		[]any{map[string]any{"field": "STATUS", "direction": "DESC"}, map[string]any{"field": "CREATED_AT"}}},
	"Query.apiKeys": {
		map[string]any{"field": "CREATED_AT", "direction": "DESC"},
		map[string]any{"field": "CREATED_AT", "direction": "ASC"}},
	"Session.turns":              {[]any{map[string]any{"field": "NUMBER"}}, []any{map[string]any{"field": "STATUS", "direction": "DESC"}}},
	"Session.refs":               {[]any{map[string]any{"field": "REF"}}, []any{map[string]any{"field": "TURN_CREATED", "direction": "DESC"}}},
	"Session.artifacts":          {[]any{map[string]any{"field": "CREATED_AT"}}, []any{map[string]any{"field": "STATUS", "direction": "DESC"}}},
	"Session.stepResults":        {[]any{map[string]any{"field": "TURN"}}, []any{map[string]any{"field": "CREATED_AT", "direction": "DESC"}}},
	"Session.contextReceipts":    {[]any{map[string]any{"field": "TURN"}}, []any{map[string]any{"field": "CREATED_AT", "direction": "DESC"}}},
	"Session.pendingArtifacts":   {[]any{map[string]any{"field": "CREATED_AT"}}, []any{map[string]any{"field": "CREATED_TURN", "direction": "DESC"}}},
	"Session.justSavedArtifacts": {[]any{map[string]any{"field": "CREATED_AT"}}, []any{map[string]any{"field": "CREATED_TURN", "direction": "DESC"}}},
	"Session.events":             {[]any{map[string]any{"field": "SEQUENCE"}}, []any{map[string]any{"field": "CREATED_AT", "direction": "DESC"}}},
}

// schemaConnection is a connection field found in the schema.
type schemaConnection struct {
	owner string
	def   *ast.FieldDefinition
}

func (c schemaConnection) name() string { return c.owner + "." + c.def.Name }

// schemaConnections lists every Relay connection field of the schema.
func schemaConnections() []schemaConnection {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	var out []schemaConnection
	for _, def := range schema.Types {
		if def.Kind != ast.Object || strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if f.Arguments.ForName("first") != nil && f.Arguments.ForName("last") != nil &&
				strings.HasSuffix(f.Type.Name(), "Connection") {
				out = append(out, schemaConnection{owner: def.Name, def: f})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name() < out[j].name() })
	return out
}

// query reads one page of the connection (of the Session $id when nested).
func (c schemaConnection) query() string {
	orderType := c.def.Arguments.ForName("orderBy").Type.String()
	sel := fmt.Sprintf(`%s(first: $first, after: $after, last: $last, before: $before, orderBy: $orderBy) {
	  totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } }`, c.def.Name)
	vars := "$first: Int, $after: Cursor, $last: Int, $before: Cursor, $orderBy: " + orderType
	if c.owner == "Query" {
		return "query(" + vars + ") { " + sel + " }"
	}
	return "query($id: ID!, " + vars + ") { node(id: $id) { ... on " + c.owner + " { " + sel + " } } }"
}

type connPage struct {
	TotalCount int `json:"totalCount"`
	PageInfo   struct {
		HasNextPage     bool    `json:"hasNextPage"`
		HasPreviousPage bool    `json:"hasPreviousPage"`
		StartCursor     *string `json:"startCursor"`
		EndCursor       *string `json:"endCursor"`
	} `json:"pageInfo"`
	Edges []struct {
		Cursor string `json:"cursor"`
		Node   struct {
			ID string `json:"id"`
		} `json:"node"`
	} `json:"edges"`
}

// cursorFixture is a database with two sessions that each hold at least
// three rows of every nested connection, and three API keys.
type cursorFixture struct {
	s      *apitest.Server
	a, b   string
	orders map[string][2]any
}

func newCursorFixture(t *testing.T) *cursorFixture {
	s := apitest.New(t)
	f := &cursorFixture{s: s}
	for i := range 3 {
		s.NewKey(t, "READER", fmt.Sprintf("tenant-%d", i))
	}
	var ids []string
	for _, key := range []string{"cursor-a", "cursor-b", "cursor-c"} {
		a := newAgent(t, s, key)
		ids = append(ids, a.id)
		for turn := 1; turn <= 3; turn++ {
			a.turn(fmt.Sprintf("turn %d", turn))
			a.read("recipes", map[string]any{"id": newUUID(), "name": fmt.Sprintf("Dal %d", turn)})
			for range 2 {
				a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", content: {name: "Kheer"}}) { ref { ref } } }`, nil)
			}
			a.do(`mutation($id: ID!) { recordStepResult(input: {sessionID: $id, step: 1, kind: READ, data: [{id: "recipe_1"}]}) { stepResult { step } } }`, nil)
			a.do(`mutation($id: ID!) { recordContext(input: {sessionID: $id, node: THINK}) { receipt { id } } }`, nil)
		}
		// Saved in the open turn: three artifacts just saved, three still pending.
		for n := 1; n <= 3; n++ {
			a.do(`mutation($id: ID!, $e: UUID!, $g: String!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, genRef: $g}) { ref { ref } } }`,
				map[string]any{"e": newUUID(), "g": fmt.Sprintf("gen_recipe_%d", n)})
		}
	}
	f.a, f.b = ids[0], ids[1]
	return f
}

// page reads one page of c; parent is the Session for a nested connection.
func (f *cursorFixture) page(t *testing.T, c schemaConnection, parent string, vars map[string]any) (*connPage, *apitest.Response) {
	t.Helper()
	if c.owner != "Query" {
		vars["id"] = parent
	}
	res := f.s.Do(t, c.query(), vars)
	if len(res.Errors) > 0 {
		return nil, res
	}
	var data map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res.Data, &data))
	raw := data[c.def.Name]
	if c.owner != "Query" {
		var node map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data["node"], &node))
		raw = node[c.def.Name]
	}
	var p connPage
	require.NoError(t, json.Unmarshal(raw, &p))
	return &p, res
}

// walk pages through c forward two at a time and then backward, and
// returns the node ids in order and every cursor handed out.
func (f *cursorFixture) walk(t *testing.T, c schemaConnection, parent string, order any) (ids, cursors []string) {
	t.Helper()
	vars := map[string]any{"first": 2, "orderBy": order}
	total := -1
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20)
		p, res := f.page(t, c, parent, vars)
		require.NotNil(t, p, "%s: %v", c.name(), res.Errors)
		total = p.TotalCount
		for _, e := range p.Edges {
			ids = append(ids, e.Node.ID)
			cursors = append(cursors, e.Cursor)
		}
		if !p.PageInfo.HasNextPage {
			break
		}
		vars["after"] = *p.PageInfo.EndCursor
	}
	require.GreaterOrEqual(t, len(ids), 3, "%s needs three rows to page", c.name())
	require.Len(t, ids, total, "%s: forward pages hold every row", c.name())
	assert.Len(t, uniq(ids), len(ids), "%s: no row twice", c.name())

	var backward []string
	vars = map[string]any{"last": 2, "orderBy": order}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20)
		p, res := f.page(t, c, parent, vars)
		require.NotNil(t, p, "%s: %v", c.name(), res.Errors)
		var got []string
		for _, e := range p.Edges {
			got = append(got, e.Node.ID)
			cursors = append(cursors, e.Cursor)
		}
		backward = append(got, backward...)
		if !p.PageInfo.HasPreviousPage {
			break
		}
		vars["before"] = *p.PageInfo.StartCursor
	}
	assert.Equal(t, ids, backward, "%s: paging backward visits the same order", c.name())
	return ids, cursors
}

// misspelled is every other spelling of a cursor's bytes: padded, in the
// URL alphabet (when that differs), with nonzero trailing bits, cut short,
// and with bytes appended.
func misspelled(t *testing.T, cursor string) map[string]string {
	raw, err := base64.RawStdEncoding.Strict().DecodeString(cursor)
	require.NoError(t, err, "a cursor handed out is strict base64")
	out := map[string]string{
		"padded with =":        cursor + "=",
		"cut by one character": cursor[:len(cursor)-1],
		"cut by three bytes":   base64.RawStdEncoding.EncodeToString(raw[:len(raw)-3]),
		"a byte appended":      base64.RawStdEncoding.EncodeToString(append(slices.Clone(raw), 0)),
		"text appended":        cursor + "AAAA",
	}
	if padded := base64.StdEncoding.EncodeToString(raw); padded != cursor {
		out["padded"] = padded
	}
	if url := base64.RawURLEncoding.EncodeToString(raw); url != cursor {
		out["URL alphabet"] = url
	}
	if len(cursor)%4 != 0 { // the last character carries unused bits: set one
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		last := strings.IndexByte(alphabet, cursor[len(cursor)-1])
		out["trailing bits set"] = cursor[:len(cursor)-1] + string(alphabet[last|1])
	}
	return out
}

// A cursor is valid only where it was handed out: every connection field
// of the schema pages forward and backward with its own cursors, and
// refuses with INVALID_CURSOR a cursor of another connection, of the same
// field of another parent, of another orderBy, or spelled any other way.
func TestEveryConnectionTakesOnlyItsOwnCursors(t *testing.T) {
	f := newCursorFixture(t)
	conns := schemaConnections()
	require.NotEmpty(t, conns)
	names := make([]string, len(conns))
	for i, c := range conns {
		names[i] = c.name()
		require.Contains(t, connectionOrders, c.name(), "connection %s has no orders in connectionOrders: add two", c.name())
	}
	for name := range connectionOrders {
		require.Contains(t, names, name, "connectionOrders names %s, which the schema does not have", name)
	}

	// Every connection's cursors, per order, in session a (or at the root).
	handed := map[string][2][]string{}
	for _, c := range conns {
		orders := connectionOrders[c.name()]
		var both [2][]string
		var idsByOrder [2][]string
		for i, order := range orders {
			idsByOrder[i], both[i] = f.walk(t, c, f.a, order)
		}
		assert.ElementsMatch(t, idsByOrder[0], idsByOrder[1], "%s: both orders page the same rows", c.name())
		handed[c.name()] = both
	}

	before := dataDigest(t, f.s)
	urlTried := false
	refuse := func(c schemaConnection, parent string, order any, cursor, because, wantMessage string) {
		t.Helper()
		for _, arg := range []string{"after", "before"} {
			vars := map[string]any{"first": 2, "orderBy": order}
			if arg == "before" {
				vars = map[string]any{"last": 2, "orderBy": order}
			}
			vars[arg] = cursor
			_, res := f.page(t, c, parent, vars)
			if !assert.Len(t, res.Errors, 1, "%s(%s: a cursor %s) was taken", c.name(), arg, because) {
				continue
			}
			e := res.Errors[0]
			assert.Equal(t, "INVALID_CURSOR", e.Code(), "%s(%s: a cursor %s): %s", c.name(), arg, because, e.Message)
			assert.Contains(t, e.Message, wantMessage, "%s(%s: a cursor %s)", c.name(), arg, because)
			assert.LessOrEqual(t, len(e.Message), 300, "the message quotes at most the cursor's start: %s", e.Message)
		}
	}
	for i, c := range conns {
		cursors := handed[c.name()]
		own := cursors[0][0]
		// A cursor of the next connection in the list.
		other := conns[(i+1)%len(conns)]
		refuse(c, f.a, connectionOrders[c.name()][0], handed[other.name()][0][0], "of "+other.name(),
			"this cursor was handed out by another connection, not "+c.name())
		if c.owner != "Query" {
			refuse(c, f.b, connectionOrders[c.name()][0], own, "of session a used on session b",
				"this cursor was handed out by "+c.name()+" of another Session")
		}
		refuse(c, f.a, connectionOrders[c.name()][0], cursors[1][0], "of the other orderBy",
			"this cursor was handed out by "+c.name()+" with another orderBy")
		// Spellings: a cursor with + or / shows the URL alphabet refused.
		for _, cur := range cursors[0] {
			if strings.ContainsAny(cur, "+/") {
				own, urlTried = cur, true
				break
			}
		}
		for how, bad := range misspelled(t, own) {
			refuse(c, f.a, connectionOrders[c.name()][0], bad, how, "is not a cursor from this API")
		}
	}
	assert.True(t, urlTried, "some cursor was tried in the URL alphabet")
	assert.Equal(t, before, dataDigest(t, f.s), "refused cursors changed no data")

	// The cursor of session b's own page still pages session b.
	c := conns[slices.IndexFunc(conns, func(c schemaConnection) bool { return c.name() == "Session.turns" })]
	bIDs, bCursors := f.walk(t, c, f.b, connectionOrders["Session.turns"][0])
	p, res := f.page(t, c, f.b, map[string]any{"first": 1, "after": bCursors[0], "orderBy": connectionOrders["Session.turns"][0]})
	require.NotNil(t, p, "%v", res.Errors)
	require.Len(t, p.Edges, 1)
	assert.Equal(t, bIDs[1], p.Edges[0].Node.ID)
}

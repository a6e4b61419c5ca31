package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/graph/generated"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// compiledPair is one database served twice: with compiled reads (the
// default) and with gqlgen executing every field.
type compiledPair struct {
	on, off *apitest.Server
}

func newCompiledPair(t *testing.T) compiledPair {
	t.Helper()
	on := apitest.New(t)
	off := apitest.Replica(t, on.DSN, func(c *app.Config) { c.CompiledReads = false })
	off.Key = on.AdminKey
	return compiledPair{on: on, off: off}
}

// same asks both servers and requires byte-identical response bodies (as
// sent, not re-encoded: an escape and the character it stands for differ).
// It returns the statements the compiled server issued.
func (p compiledPair) same(t *testing.T, key, query string, vars map[string]any) int64 {
	t.Helper()
	before := p.on.Statements()
	got := p.on.WithKey(key).Do(t, query, vars)
	statements := p.on.Statements() - before
	want := p.off.WithKey(key).Do(t, query, vars)
	require.Empty(t, want.Errors, "%s", want.Body)
	require.Equal(t, string(want.Body), string(got.Body), "compiled reads answered differently:\n%s", query)
	return statements
}

// compiledFixture fills the database with what a page can show: sessions
// of two tenants, nulls and non-nulls in every nullable column, strings
// that need escaping, an expired session, failed and open turns, a pending
// generated ref.
func compiledFixture(t *testing.T, s *apitest.Server) {
	t.Helper()
	apitest.SessionGraph(t, s, "acme", 6, 4, 6)
	apitest.SessionGraph(t, s, "globex", 2, 2, 3)
	a := newAgent(t, s, "compiled-rich")
	a.do(`mutation($id: ID!, $prompt: String!, $meta: StringMap!) { updateSession(input: {id: $id, systemPrompt: $prompt, metadata: $meta}) { session { id } } }`,
		map[string]any{"prompt": "Say \"hi\"\n\ttab é 日本 \u0001\u0008\u000c \\ </script> \u2028",
			"meta": map[string]any{"zeta": "last", "alpha": "first", "ä": "umlaut", "b": "x\ny", "10": "ten", "9": "nine", "Z": "<&>"}})
	a.turn("first, with \"quotes\" and\nnewlines")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal Tadka", "instructions": "Simmer."})
	a.generate("recipe", map[string]any{"name": "Idea", "ingredients": []any{"rice"}, "instructions": "Cook."})
	a.turn("second")
	a.do(`mutation($id: ID!) { failTurn(input: {sessionID: $id, reason: "tool crashed"}) { turn { number } } }`, nil)
	a.turn("third, left open")
	gone := newAgent(t, s, "compiled-expired")
	gone.turn("hello")
	gone.do(`mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, nil)
}

// leafFields lists a type's scalar and enum fields without arguments, from
// the schema itself: a field added later is compared without touching
// this test.
func leafFields(t *testing.T, typeName string) []string {
	t.Helper()
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	def := schema.Types[typeName]
	require.NotNil(t, def, typeName)
	var out []string
	for _, f := range def.Fields {
		kind := schema.Types[f.Type.Name()].Kind
		if len(f.Arguments) == 0 && (kind == ast.Scalar || kind == ast.Enum) && !strings.HasPrefix(f.Name, "__") {
			out = append(out, f.Name)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// Every field the compiled reads may write is written as gqlgen writes
// it, for every row of the fixture, each alone (a field they do not know
// sends the page to gqlgen, so alone is how each one is compared) and all
// together; and the page costs one statement.
func TestCompiledReadsAnswerEveryFieldAsGqlgenDoes(t *testing.T) {
	p := newCompiledPair(t)
	compiledFixture(t, p.on)
	page := func(sessionFields, turnFields, refFields string) string {
		return fmt.Sprintf(`{ sessions(first: 100, orderBy: {field: CREATED_AT, direction: DESC}) { edges { node { id %s
			turns(first: 10) { edges { node { id %s } } } refs(first: 10) { edges { node { id %s } } } } } } }`,
			sessionFields, turnFields, refFields)
	}
	compiledFields := map[string][]string{}
	for _, typ := range []string{"Session", "Turn", "Ref"} {
		for _, f := range leafFields(t, typ) {
			var q string
			switch typ {
			case "Session":
				q = page(f, "", "")
			case "Turn":
				q = page("", f, "")
			case "Ref":
				q = page("", "", f)
			}
			if p.same(t, p.on.AdminKey, q, nil) == 1 {
				compiledFields[typ] = append(compiledFields[typ], f)
			}
		}
	}
	// The fields a frontend's graph shows are all compiled.
	for typ, fields := range map[string][]string{
		"Session": {"id", "tenant", "externalKey", "userID", "status", "currentTurn", "tokenCount", "metadata", "createdAt", "lastActiveAt", "expiresAt", "expiredAt"},
		"Turn":    {"id", "number", "userMessage", "assistantMessage", "status", "startedAt", "completedAt"},
		"Ref":     {"id", "ref", "entityType", "entityID", "label", "action", "detailLevel", "turnCreated", "turnLastReferenced"},
	} {
		assert.Subset(t, compiledFields[typ], fields, "%s fields answered by gqlgen", typ)
	}
	all := page(strings.Join(compiledFields["Session"], " "), strings.Join(compiledFields["Turn"], " "), strings.Join(compiledFields["Ref"], " "))
	assert.EqualValues(t, 1, p.same(t, p.on.AdminKey, all, nil), "the whole page is one statement")
	// Both write a String field's and a StringMap's text alike: <, & and >
	// and U+2028 as themselves, control characters as upper-case escapes.
	body := string(p.on.Do(t, page("systemPrompt metadata", "", ""), nil).Body)
	for _, raw := range []string{`"Z":"<&>"`, `"b":"x\ny"`, "</script> \u2028\"", `\u0001\u0008\u000C`} {
		assert.Contains(t, body, raw)
	}
	for _, escaped := range []string{`\u003c`, `\u003C`, `\u0026`, `\u2028`} {
		assert.NotContains(t, body, escaped)
	}
}

// Page shapes: cursors, counts, pageInfo at both levels, order, filters,
// aliases, fragments, directives, __typename, empty pages, and a tenant's
// key, each answered byte for byte as gqlgen answers it.
func TestCompiledReadsAnswerEveryPageShapeAsGqlgenDoes(t *testing.T) {
	p := newCompiledPair(t)
	compiledFixture(t, p.on)
	var first struct {
		Sessions struct {
			PageInfo struct{ EndCursor string } `json:"pageInfo"`
		} `json:"sessions"`
	}
	p.on.MustDo(t, `{ sessions(first: 3) { pageInfo { endCursor } edges { cursor } } }`, nil, &first)
	acme := p.on.NewKey(t, "CLIENT", "acme")
	p.on.WithKey(acme).MustDo(t, `{ viewer { role } }`, nil, nil) // its first request looks it up
	p.off.WithKey(acme).MustDo(t, `{ viewer { role } }`, nil, nil)
	cases := []struct {
		name, key, query string
		vars             map[string]any
		statements       int64
	}{
		{"the benchmark's page", "", sessionGraphPage, nil, 1},
		{"counts and page info at both levels", "", `{ sessions(first: 4) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
			edges { cursor node { id turns(first: 2) { totalCount pageInfo { hasNextPage hasPreviousPage } edges { node { number } } }
			refs(first: 100) { totalCount pageInfo { hasNextPage } } } } } }`, nil, 2},
		{"the next page by cursor", "", `query($after: Cursor) { sessions(first: 3, after: $after) { pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
			edges { cursor node { externalKey } } } }`, map[string]any{"after": first.Sessions.PageInfo.EndCursor}, 1},
		{"the last page, and the one before a cursor", "", `query($before: Cursor) { a: sessions(last: 3) { pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
			edges { cursor node { externalKey } } } b: sessions(last: 2, before: $before) { totalCount pageInfo { hasNextPage hasPreviousPage }
			edges { cursor node { externalKey } } } }`, map[string]any{"before": first.Sessions.PageInfo.EndCursor}, 3},
		{"orders, ascending and descending, one and two fields", "", `{
			a: sessions(first: 5, orderBy: [{field: STATUS, direction: DESC}, {field: LAST_ACTIVE_AT}]) { edges { cursor node { externalKey status } } }
			b: sessions(first: 5, orderBy: {field: TOKEN_COUNT}) { edges { cursor node { externalKey } } } }`, nil, 2},
		{"every other order field's cursors (read into the node by pgx)", "", `{
			a: sessions(first: 3, orderBy: [{field: CURRENT_TURN, direction: DESC}, {field: UPDATED_AT}]) { pageInfo { startCursor endCursor } edges { cursor node { externalKey } } }
			b: sessions(last: 3, orderBy: {field: EXPIRES_AT}) { pageInfo { hasPreviousPage startCursor endCursor } edges { cursor node { externalKey } } }
			c: sessions(first: 2, orderBy: {field: CREATED_AT, direction: DESC}) { pageInfo { endCursor } edges { node { externalKey } } } }`, nil, 3},
		{"nested orders given as one order, not a list", "", `{ sessions(first: 3) { edges { node { turns(first: 3, orderBy: {field: NUMBER, direction: DESC}) { edges { node { number } } }
			refs(first: 4, orderBy: {field: TURN_LAST_REFERENCED, direction: DESC}) { edges { node { ref } } } } } } }`, nil, 1},
		{"nested orders", "", `{ sessions(first: 3) { edges { node { turns(first: 3, orderBy: [{field: NUMBER, direction: DESC}]) { edges { node { number } } }
			refs(first: 4, orderBy: [{field: TURN_LAST_REFERENCED, direction: DESC}]) { edges { node { ref } } } } } } }`, nil, 1},
		{"filters", "", `{ sessions(first: 10, where: {or: [{tenant: "globex"}, {externalKeyHasPrefix: "compiled"}], statusNEQ: EXPIRED}) {
			totalCount edges { node { externalKey status } } } }`, nil, 2},
		{"an empty filter", "", `{ sessions(first: 10, where: {and: [{}]}) { totalCount edges { node { id } } } }`, nil, 2},
		{"aliases, fragments, directives and typenames", "", `query($yes: Boolean!, $no: Boolean!) { sessions(first: 3) { __typename
			pageInfo { __typename ...on PageInfo { endCursor } } totalCount @include(if: $yes) @skip(if: $no)
			edges { __typename c: cursor node { __typename ...S k: externalKey turns(first: 2) @include(if: $yes) { __typename
			pageInfo { __typename hasNextPage } edges { __typename node { __typename ... on Turn { n: number } } } } refs(first: 2) @include(if: $no) { totalCount } } } } }
			fragment S on Session { id status ... on Node { id } }`, map[string]any{"yes": true, "no": false}, 2},
		{"a connection's own fields aliased", "", `{ sessions(first: 3) { c: totalCount p: pageInfo { hasNextPage } e: edges { n: node { id
			t: turns(first: 2) { c: totalCount p: pageInfo { hasNextPage } e: edges { n: node { number } } } } } } }`, nil, 2},
		{"first: 0", "", `{ sessions(first: 0) { totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } }`, nil, 1},
		{"no edges: pageInfo from the count", "", `{ sessions(first: 2) { pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, nil, 1},
		{"the ids page", "", sessionIDsPage, nil, 1},
		{"cursorless: page info and edges, a full page and an exact one", "", `{ a: sessions(first: 3) { __typename pageInfo { __typename hasNextPage hasPreviousPage }
			edges { __typename node { __typename id status } } } b: sessions(first: 11) { pageInfo { hasNextPage } edges { node { externalKey } } }
			c: sessions(first: 100) { pageInfo { hasNextPage } edges { node { externalKey } } } }`, nil, 3},
		{"cursorless after and before a cursor", "", `query($c: Cursor) { a: sessions(first: 3, after: $c) { pageInfo { hasNextPage hasPreviousPage }
			edges { node { externalKey } } } b: sessions(first: 2, before: $c) { pageInfo { hasNextPage hasPreviousPage } edges { node { externalKey } } } }`,
			map[string]any{"c": first.Sessions.PageInfo.EndCursor}, 2},
		{"cursorless edges without nodes, ordered and filtered", "", `{ a: sessions(first: 4, orderBy: [{field: STATUS, direction: DESC}, {field: LAST_ACTIVE_AT}]) {
			edges { __typename } } b: sessions(first: 10, where: {statusNEQ: EXPIRED}, orderBy: {field: CREATED_AT, direction: DESC}) {
			edges { node { externalKey turns(first: 2) { pageInfo { hasNextPage } edges { node { number } } } } } }
			c: sessions(first: 5, where: {externalKey: "no such key"}) { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } } }`, nil, 3},
		{"a tenant's key sees its tenant, cursorless", acme, `{ sessions(first: 100) { pageInfo { hasNextPage } edges { node { tenant externalKey } } } }`, nil, 1},
		{"a tenant's key sees its tenant", acme, `{ sessions(first: 100) { totalCount edges { node { tenant externalKey refs(first: 2) { totalCount } } } } }`, nil, 2},
	}
	// Both ways, one order given alone is that order (entgql's eager
	// loading took it for none).
	var desc struct {
		Sessions struct {
			Edges []struct {
				Node struct {
					Turns struct {
						Edges []struct {
							Node struct{ Number int } `json:"node"`
						} `json:"edges"`
					} `json:"turns"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"sessions"`
	}
	for _, srv := range []*apitest.Server{p.on, p.off} {
		srv.MustDo(t, `{ sessions(first: 1, where: {externalKey: "acme-chat-000"}) { edges { node {
			turns(first: 2, orderBy: {field: NUMBER, direction: DESC}) { edges { node { number } } } } } } }`, nil, &desc)
		require.Len(t, desc.Sessions.Edges, 1)
		require.Len(t, desc.Sessions.Edges[0].Node.Turns.Edges, 2)
		assert.Equal(t, 4, desc.Sessions.Edges[0].Node.Turns.Edges[0].Node.Number)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := c.key
			if key == "" {
				key = p.on.AdminKey
			}
			assert.Equal(t, c.statements, p.same(t, key, c.query, c.vars), "statements")
		})
	}
}

// A selection the compiled reads do not know is answered by gqlgen, whole:
// the same answer, with gqlgen's statements.
func TestCompiledReadsLeaveWhatTheyDoNotKnowToGqlgen(t *testing.T) {
	p := newCompiledPair(t)
	compiledFixture(t, p.on)
	// Each asks for refs' totalCount too, which gqlgen reads with a
	// statement of its own: more than one statement is gqlgen's answer.
	for _, q := range []string{
		`{ sessions(first: 3) { edges { node { id focus { type } refs(first: 1) { totalCount } } } } }`,
		`{ sessions(first: 3) { edges { node { id pendingClarification refs(first: 1) { totalCount } } } } }`,
		`{ sessions(first: 3) { edges { node { id turns(first: 2) { pageInfo { endCursor } } refs(first: 1) { totalCount } } } } }`,
		`{ sessions(first: 3) { edges { node { id turns(first: 2, where: {status: COMPLETED}) { totalCount } refs(first: 1) { totalCount } } } } }`,
		`{ sessions(first: 3) { edges { node { id turns(first: 0) { totalCount } refs(first: 1) { totalCount } } } } }`,
		`{ sessions(first: 3) { edges { node { id artifacts(first: 2) { edges { node { content } } } refs(first: 1) { totalCount } } } } }`,
	} {
		assert.Greater(t, p.same(t, p.on.AdminKey, q, nil), int64(1), q)
	}
	// A bad cursor is refused the same way.
	res := p.on.Do(t, `{ sessions(first: 1, after: "garbage") { totalCount } }`, nil)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "INVALID_CURSOR", res.Errors[0].Code())
	assert.True(t, bytes.Equal(res.Data, []byte("null")) || len(res.Data) == 0, "%s", res.Data)
}

// Outside compiled reads too (a session's pages are gqlgen's), a
// connection's aliased fields answer what the unaliased ones do: entgql
// looked its fields up by alias, and `c: totalCount` answered 0.
func TestAliasedConnectionFieldsAnswerAsTheirNames(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "aliases")
	a.turn("one")
	a.turn("two")
	a.turn("three")
	plain := a.do(`query($id: ID!) { session(id: $id) { turns(first: 2) { totalCount pageInfo { hasNextPage } edges { node { number } } } } }`, nil)
	aliased := a.do(`query($id: ID!) { session(id: $id) { turns: turns(first: 2) { totalCount: totalCount pageInfo: pageInfo { hasNextPage }
		edges: edges { node: node { number } } } } }`, nil)
	assert.JSONEq(t, string(plain), string(aliased))
	renamed := decode[struct {
		Session struct {
			T struct {
				C int `json:"c"`
				P struct {
					HasNextPage bool `json:"hasNextPage"`
				} `json:"p"`
				E []struct {
					N struct {
						Number int `json:"number"`
					} `json:"n"`
				} `json:"e"`
			} `json:"t"`
		} `json:"session"`
	}](t, a.do(`query($id: ID!) { session(id: $id) { t: turns(first: 2) { c: totalCount p: pageInfo { hasNextPage } e: edges { n: node { number } } } } }`, nil))
	assert.Equal(t, 3, renamed.Session.T.C)
	assert.True(t, renamed.Session.T.P.HasNextPage)
	require.Len(t, renamed.Session.T.E, 2)
	assert.Equal(t, 1, renamed.Session.T.E[0].N.Number)
}

// A page whose selection needs no cursor is read as one row, in which
// PostgreSQL writes the page's edges and counts the row past it; on a
// tenant's key that row holds only the tenant's sessions, and hasNextPage
// counts only theirs.
func TestCompiledCursorlessPageIsOneStatementOfTheTenantsSessions(t *testing.T) {
	rec := &apitest.Recorder{}
	s := apitest.New(t, apitest.Recording(rec))
	apitest.SessionGraph(t, s, "acme", 3, 1, 1)
	apitest.SessionGraph(t, s, "globex", 4, 1, 1)
	acme := s.NewKey(t, "CLIENT", "acme")
	s.WithKey(acme).MustDo(t, `{ viewer { role } }`, nil, nil) // its first request looks it up
	type page struct {
		Sessions struct {
			PageInfo struct{ HasNextPage bool } `json:"pageInfo"`
			Edges    []struct {
				Node struct{ Tenant string } `json:"node"`
			} `json:"edges"`
		} `json:"sessions"`
	}
	tenants := func(p page) []string {
		var out []string
		for _, e := range p.Sessions.Edges {
			out = append(out, e.Node.Tenant)
		}
		return out
	}
	const q = `query($n: Int!) { sessions(first: $n) { pageInfo { hasNextPage } edges { node { tenant } } } }`
	var two, three page
	stmts := rec.Record(func() { s.WithKey(acme).MustDo(t, q, map[string]any{"n": 2}, &two) })
	require.Len(t, stmts, 1)
	assert.True(t, strings.HasSuffix(stmts[0].Query, " LIMIT 3"), stmts[0].Query) // the page's rows and the one past it
	assert.Equal(t, []string{"acme", "acme"}, tenants(two))
	assert.True(t, two.Sessions.PageInfo.HasNextPage)
	s.WithKey(acme).MustDo(t, q, map[string]any{"n": 3}, &three)
	assert.Equal(t, []string{"acme", "acme", "acme"}, tenants(three))
	assert.False(t, three.Sessions.PageInfo.HasNextPage)
}

// A root page's plan made once for a document (its selection uses no
// variable below its root fields' own arguments) answers every later request of the same
// query as gqlgen does, whatever the page's own arguments; one whose
// selection uses variables is planned with each request's.
func TestCompiledPlansRememberedPerDocumentAnswerAsGqlgenDoes(t *testing.T) {
	p := newCompiledPair(t)
	compiledFixture(t, p.on)
	acme := p.on.NewKey(t, "CLIENT", "acme")
	p.on.WithKey(acme).MustDo(t, `{ viewer { role } }`, nil, nil)
	p.off.WithKey(acme).MustDo(t, `{ viewer { role } }`, nil, nil)
	var first struct {
		Sessions struct {
			PageInfo struct{ EndCursor string } `json:"pageInfo"`
		} `json:"sessions"`
	}
	p.on.MustDo(t, `{ sessions(first: 2, orderBy: {field: CREATED_AT, direction: DESC}) { pageInfo { endCursor } edges { cursor } } }`, nil, &first)
	remembered := `query($n: Int, $after: Cursor) { sessions(first: $n, after: $after, orderBy: {field: CREATED_AT, direction: DESC}) {
		pageInfo { hasNextPage hasPreviousPage } edges { __typename node { ...S k: externalKey } } } }
		fragment S on Session { id status }`
	const twoOperations = `query Alone { ...F } query Merged { ...F sessions(first: 3) { pageInfo { hasNextPage } } }
		fragment F on Query { sessions(first: 3) { edges { node { id } } } }`
	planned := `query($yes: Boolean!) { sessions(first: 4) { edges { node { id status @include(if: $yes) metadata @skip(if: $yes) } } } }`
	// A page that nests pages is remembered too: its nested pages' predicates
	// (a client key's tenant) are each request's.
	nested := `query($n: Int) { sessions(first: $n) { pageInfo { hasNextPage endCursor } edges { node { id
		turns(first: 2) { totalCount pageInfo { hasNextPage } edges { node { number } } } refs(first: 3) { edges { node { ref } } } } } } }`
	nestedPlanned := `query($t: Int) { sessions(first: 5) { edges { node { id turns(first: $t) { edges { node { number } } } } } } }`
	for i, c := range []struct {
		key, query string
		vars       map[string]any
	}{
		{p.on.AdminKey, remembered, map[string]any{"n": 3}},
		{p.on.AdminKey, remembered, map[string]any{"n": 3, "after": first.Sessions.PageInfo.EndCursor}},
		{acme, remembered, map[string]any{"n": 100}},
		{p.on.AdminKey, remembered, map[string]any{"n": 1}},
		{p.on.AdminKey, planned, map[string]any{"yes": true}},
		{p.on.AdminKey, planned, map[string]any{"yes": false}},
		{acme, planned, map[string]any{"yes": true}},
		{p.on.AdminKey, sessionIDsPage, nil},
		{p.on.AdminKey, sessionIDsPage, nil},
		{p.on.AdminKey, nested, map[string]any{"n": 3}},
		{acme, nested, map[string]any{"n": 100}},
		{p.on.AdminKey, nested, map[string]any{"n": 100}},
		{p.on.AdminKey, nestedPlanned, map[string]any{"t": 1}},
		{acme, nestedPlanned, map[string]any{"t": 3}},
		{p.on.AdminKey, nestedPlanned, map[string]any{"t": 2}},
	} {
		assert.EqualValues(t, 1, p.same(t, c.key, c.query, c.vars), "request %d: statements", i)
	}
	// first: 0 is the page with rows' (no statement), on a copy of the plan.
	assert.EqualValues(t, 0, p.same(t, p.on.AdminKey, remembered, map[string]any{"n": 0}))
	// One fragment's field, merged with another field of its response key
	// in one operation of the document and alone in the other.
	// A root field merged with another of its response key, or not, as a
	// variable says.
	const mergedIf = `query($x: Boolean!) { sessions(first: 2) { edges { node { id } } }
		sessions(first: 2) @include(if: $x) { pageInfo { hasNextPage } } }`
	for _, x := range []bool{false, true, false, true} {
		assert.EqualValues(t, 1, p.same(t, p.on.AdminKey, mergedIf, map[string]any{"x": x}), "x %v", x)
	}
	for _, name := range []string{"Alone", "Merged", "Alone", "Merged"} {
		got, want := postOperation(t, p.on, twoOperations, name), postOperation(t, p.off, twoOperations, name)
		assert.Equal(t, string(want), string(got), name)
		assert.NotContains(t, string(got), `"errors"`)
	}
}

// postOperation posts the operation name of a document with the server's
// key and returns the response's body.
func postOperation(t *testing.T, s *apitest.Server, document, name string) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": document, "operationName": name})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return out
}

package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// nested returns a record whose field "more" nests depth levels of
// {"more": ...}.
func nested(depth int) map[string]any {
	v := map[string]any{"leaf": true}
	for range depth {
		v = map[string]any{"more": v}
	}
	return v
}

// Input the server cannot take is refused at the edge, before anything
// runs, with a code and the path of the field at fault; nothing changes.
// Each case answered INTERNAL, or was taken, before: a NUL reached
// PostgreSQL, 2^62 passed the TTL check as a 64-bit int and expired the
// session at once, a 5,000-deep filter reached SQL.
func TestInputTheServerCannotTakeIsRefusedWithItsPath(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "edge")
	a.turn("hi")
	record := func(fields map[string]any) map[string]any {
		fields["id"] = newUUID()
		return fields
	}
	tooMany := make([]any, engine.MaxListItems+1)
	for i := range tooMany {
		tooMany[i] = record(map[string]any{"name": "x"})
	}
	big := strings.Repeat("x", engine.MaxInputBytes/5+1) // five of these are over the total
	deepNot := map[string]any{}
	for range 5000 {
		deepNot = map[string]any{"not": deepNot}
	}
	deepLiteral := strings.Repeat("{not: ", 2400) + "{}" + strings.Repeat("}", 2400)
	updateSession := `mutation($in: UpdateSessionInput!) { updateSession(input: $in) { session { id } } }`
	read := `mutation($id: ID!, $records: [Map!]!) { recordRead(input: {sessionID: $id, table: "recipes", records: $records}) { records } }`
	var page struct {
		Sessions struct {
			PageInfo struct{ EndCursor string } `json:"pageInfo"`
		} `json:"sessions"`
	}
	s.MustDo(t, `{ sessions(first: 1) { edges { cursor } pageInfo { endCursor } } }`, nil, &page)
	cursor := page.Sessions.PageInfo.EndCursor
	require.NotEmpty(t, cursor)

	cases := []struct {
		name, query string
		vars        map[string]any
		code        string
		field       any
	}{
		{"NUL in a tenant", openSession, map[string]any{"in": map[string]any{"tenant": "ac\x00me", "externalKey": "k"}}, "BAD_USER_INPUT", "tenant"},
		{"NUL in an external key", openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "\x00"}}, "BAD_USER_INPUT", "externalKey"},
		{"NUL in a record's value", read, map[string]any{"records": []any{record(map[string]any{"name": "Dal\x00"})}}, "BAD_USER_INPUT", "records[0].name"},
		{"NUL in a record's key", read, map[string]any{"records": []any{record(map[string]any{"na\x00me": "Dal"})}}, "BAD_USER_INPUT", `records[0]["na\x00me"]`},
		{"NUL in metadata", updateSession, map[string]any{"in": map[string]any{"id": a.id, "metadata": map[string]any{"channel": "w\x00b"}}}, "BAD_USER_INPUT", "metadata.channel"},
		{"NUL in a system prompt", updateSession, map[string]any{"in": map[string]any{"id": a.id, "systemPrompt": "\x00"}}, "BAD_USER_INPUT", "systemPrompt"},
		{"NUL in a message", `mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "ok\u0000"}) { turn { number } } }`, nil, "BAD_USER_INPUT", "assistantMessage"},
		{"NUL in a translated filter", `query($id: ID!) { session(id: $id) { translateFilters(table: "recipes", filters: [{field: "name", op: "eq", value: "\u0000"}]) { pendingRefs } } }`, nil, "BAD_USER_INPUT", "filters[0].value"},
		{"NUL in a session filter", `{ sessions(where: {or: [{tenant: "acme"}, {externalKeyHasPrefix: "\u0000"}]}) { totalCount } }`, nil, "BAD_USER_INPUT", "where.or[1].externalKeyHasPrefix"},
		{"NUL in a key name", `mutation { createAPIKey(input: {name: "ci\u0000", role: READER, tenant: "acme"}) { key } }`, nil, "BAD_USER_INPUT", "name"},
		{"2^62 seconds of TTL", updateSession, map[string]any{"in": map[string]any{"id": a.id, "ttlSeconds": int64(1) << 62}}, "BAD_USER_INPUT", "ttlSeconds"},
		{"2^31 seconds of TTL, literal", `mutation($id: ID!) { updateSession(input: {id: $id, ttlSeconds: 2147483648}) { session { id } } }`, nil, "BAD_USER_INPUT", "ttlSeconds"},
		{"an Int below 32 bits in a filter", `{ sessions(where: {tokenCountLT: -2147483649}) { totalCount } }`, nil, "BAD_USER_INPUT", "where.tokenCountLT"},
		{"null for a defaulted argument", `query($id: ID!, $n: Int) { session(id: $id) { workingMemory(everyNTurns: $n) { turnCount } } }`, map[string]any{"n": nil}, "BAD_USER_INPUT", "everyNTurns"},
		{"1,001 records", read, map[string]any{"records": tooMany}, "INPUT_TOO_LARGE", "records"},
		{"a string over a megabyte", read, map[string]any{"records": []any{record(map[string]any{"name": strings.Repeat("é", engine.MaxTextBytes/2+1)})}}, "INPUT_TOO_LARGE", "records[0].name"},
		{"a record nested too deep", read, map[string]any{"records": []any{record(nested(engine.MaxNesting))}}, "INPUT_TOO_LARGE", "records[0]" + strings.Repeat(".more", engine.MaxNesting-2)},
		{"a filter nested 5,000 deep", `query($w: SessionWhereInput) { sessions(where: $w) { totalCount } }`, map[string]any{"w": deepNot}, "INPUT_TOO_LARGE", "where" + strings.Repeat(".not", engine.MaxNesting)},
		{"a filter literal nested 2,400 deep, refused before it is parsed", `{ sessions(where: ` + deepLiteral + `) { totalCount } }`, nil, "QUERY_TOO_DEEP", nil},
		{"a filter literal nested 40 deep", `{ sessions(where: ` + strings.Repeat("{not: ", 40) + "{}" + strings.Repeat("}", 40) + `) { totalCount } }`, nil, "INPUT_TOO_LARGE", "where" + strings.Repeat(".not", engine.MaxNesting)},
		{"one variable, five times", `query($id: ID!, $s: String!) {
			a: session(id: $id) { resolveRefs(refs: [$s]) { ref } } b: session(id: $id) { resolveRefs(refs: [$s]) { ref } }
			c: session(id: $id) { resolveRefs(refs: [$s]) { ref } } d: session(id: $id) { resolveRefs(refs: [$s]) { ref } }
			e: session(id: $id) { resolveRefs(refs: [$s]) { ref } } }`, map[string]any{"s": big}, "INPUT_TOO_LARGE", "refs[0]"},
		{"a cursor with a character appended", `query($c: Cursor) { sessions(first: 1, after: $c) { totalCount } }`, map[string]any{"c": cursor + "A"}, "INVALID_CURSOR", "after"},
		{"foreign base64 as a cursor", `{ sessions(first: 1, after: "aGVsbG8gd29ybGQ") { totalCount } }`, nil, "INVALID_CURSOR", "after"},
	}
	before := dataDigest(t, s)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := map[string]any{"id": a.id}
			for k, v := range c.vars {
				vars[k] = v
			}
			// Twice: an operation without variables whose check passed is
			// not checked again (InputChecks remembers it), one refused is.
			for range 2 {
				res := s.Do(t, c.query, vars)
				require.Len(t, res.Errors, 1, "data: %s", res.Data)
				e := res.Errors[0]
				assert.Equal(t, c.code, e.Code(), e.Message)
				assert.Equal(t, c.field, e.Extensions["field"], e.Message)
				assert.Less(t, len(e.Message), 600, "the message names the field, not the whole value")
			}
		})
	}
	assert.Equal(t, before, dataDigest(t, s), "no refused request changed anything")

	// A cursor the server handed out still works.
	s.MustDo(t, `query($c: Cursor) { sessions(first: 1, after: $c) { totalCount } }`, map[string]any{"c": cursor}, nil)
}

// A recordRead too large to take is refused before it opens a transaction,
// so it never holds the session's row lock: an updateSession sent with it
// commits, and the read issues no statement at all. (A 1.9 MB name used to
// be cut to its label one rune at a time under the lock, for hours.) A name
// within the limit is taken, its label cut to 1,000 bytes.
func TestAHugeRecordReadNeverHoldsTheSessionLock(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "huge")
	a.turn("read this")
	huge := []any{map[string]any{"id": newUUID(), "name": strings.Repeat("é", 1900<<10/2)}}
	read := `mutation($id: ID!, $records: [Map!]!) { recordRead(input: {sessionID: $id, table: "recipes", records: $records}) { records } }`

	before := s.Statements()
	res := s.Do(t, read, map[string]any{"id": a.id, "records": huge})
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "INPUT_TOO_LARGE", res.Errors[0].Code())
	assert.Equal(t, "records[0].name", res.Errors[0].Extensions["field"])
	assert.Equal(t, int64(apitest.AuthStatements), s.Statements()-before, "refused before any statement: no transaction, no lock")

	var wg sync.WaitGroup
	var readRes, updateRes *apitest.Response
	wg.Go(func() { readRes = s.Do(t, read, map[string]any{"id": a.id, "records": huge}) })
	wg.Go(func() {
		updateRes = s.Do(t, `mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "still here"}) { session { historySummary } } }`,
			map[string]any{"id": a.id})
	})
	wg.Wait()
	require.Len(t, readRes.Errors, 1)
	assert.Equal(t, "INPUT_TOO_LARGE", readRes.Errors[0].Code())
	require.Empty(t, updateRes.Errors)
	assert.JSONEq(t, `{"updateSession": {"session": {"historySummary": "still here"}}}`, string(updateRes.Data))

	name := strings.Repeat("é", engine.MaxTextBytes/2)
	out := decode[struct {
		RecordRead struct {
			Records []map[string]any `json:"records"`
		} `json:"recordRead"`
	}](t, a.do(read, map[string]any{"records": []any{map[string]any{"id": newUUID(), "name": name}}}))
	require.Len(t, out.RecordRead.Records, 1)
	assert.Equal(t, name, out.RecordRead.Records[0]["name"], "the record keeps its name whole")
	label := s.Client.Ref.Query().OnlyX(access.System(context.Background())).Label
	assert.Equal(t, strings.Repeat("é", (1000-len("…"))/2)+"…", label)
}

// An empty filter matches every row wherever it stands: {} and {and: [{}]}
// (what the dashboard's "Expire matching…" sends with no filter set) match
// all, {not: {}} none, and {and: [{}, X]} what X matches. The last one used
// to pass for empty in expireSessions and expire every session.
func TestAnEmptyFilterMatchesEveryRow(t *testing.T) {
	s := apitest.New(t)
	seedSessions(t, s, "acme", 3)
	globex := seedSessions(t, s, "globex", 2)
	addTurns(t, s, globex[0].ID, 2)
	count := func(where string) int {
		var out struct {
			Sessions struct{ TotalCount int } `json:"sessions"`
		}
		s.MustDo(t, `{ sessions(where: `+where+`) { totalCount } }`, nil, &out)
		return out.Sessions.TotalCount
	}
	assert.Equal(t, 5, count(`{}`))
	assert.Equal(t, 5, count(`{and: [{}]}`))
	assert.Equal(t, 0, count(`{not: {}}`))
	assert.Equal(t, 5, count(`{or: [{}, {tenant: "acme"}]}`))
	assert.Equal(t, 2, count(`{and: [{}, {tenant: "globex"}]}`))
	assert.Equal(t, 3, count(`{not: {and: [{}, {tenant: "globex"}]}}`))
	assert.Equal(t, 1, count(`{hasTurnsWith: [{}]}`))

	var nestedTurns struct {
		Sessions struct {
			Edges []struct {
				Node struct {
					Turns, Kept struct{ TotalCount int }
				}
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { sessions(where: {id: $id}) { edges { node {
		turns(where: {not: {}}) { totalCount } kept: turns(where: {and: [{}]}) { totalCount } } } } }`,
		map[string]any{"id": globex[0].ID.String()}, &nestedTurns)
	require.Len(t, nestedTurns.Sessions.Edges, 1)
	assert.Equal(t, 0, nestedTurns.Sessions.Edges[0].Node.Turns.TotalCount)
	assert.Equal(t, 2, nestedTurns.Sessions.Edges[0].Node.Kept.TotalCount)

	var expired struct {
		ExpireSessions struct{ Count int } `json:"expireSessions"`
	}
	s.MustDo(t, `mutation { expireSessions(input: {where: {and: [{}, {tenant: "globex"}]}}) { count } }`, nil, &expired)
	assert.Equal(t, 2, expired.ExpireSessions.Count, "only globex's sessions")
	assert.Equal(t, 3, count(`{status: ACTIVE}`))
	s.MustDo(t, `mutation { expireSessions(input: {where: {and: [{}]}}) { count } }`, nil, &expired)
	assert.Equal(t, 3, expired.ExpireSessions.Count, "no filter set: every live session")
}

// errorsOf decodes a response's errors for a message in a failure.
func errorsOf(res *apitest.Response) string {
	b, _ := json.Marshal(res.Errors)
	return fmt.Sprintf("%s", b)
}

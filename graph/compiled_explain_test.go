package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/grown"
)

// The scan-count test: a compiled page's statement reads each table as
// often as its text names it, never more. A subquery the planner copies
// (a derived table's column pulled up into two expressions, each running
// the subquery as an InitPlan of its own) reads its tables twice for one
// answer; the plan test (plans_test.go) judges each scan's bounds, this
// test counts the scans. The statements are the server's own, recorded
// with their arguments on the grown database and run under
// EXPLAIN (ANALYZE, BUFFERS).

// analyzedNode is the part of EXPLAIN (ANALYZE, FORMAT JSON)'s node we count.
type analyzedNode struct {
	NodeType        string         `json:"Node Type"`
	Relation        string         `json:"Relation Name"`
	Relationship    string         `json:"Parent Relationship"`
	SubplanName     string         `json:"Subplan Name"`
	Rows            float64        `json:"Actual Rows"`
	Loops           float64        `json:"Actual Loops"`
	WorkersLaunched float64        `json:"Workers Launched"`
	SharedHits      int64          `json:"Shared Hit Blocks"`
	Plans           []analyzedNode `json:"Plans"`
}

// scansPerRelation adds to out how many times each table is scanned per
// execution of the query level it is named in. base is how many times that
// level ran: 1 for the statement; for a correlated subquery (a SubPlan),
// once per row of the node that evaluates it (a hashed one: once). A scan
// node that ran more often than its level (the inner side of a nested
// loop, an InitPlan run again) counts each run; two scan nodes of one
// named table count two.
func scansPerRelation(n analyzedNode, base float64, out map[string]float64) {
	if scans[n.NodeType] && base > 0 {
		out[n.Relation] += n.Loops / base
	}
	for _, c := range n.Plans {
		b := base
		switch {
		case c.Relationship == "SubPlan":
			b = max(min(n.Rows*n.Loops, c.Loops), 1)
		case n.NodeType == "Gather" || n.NodeType == "Gather Merge":
			b = base * (n.WorkersLaunched + 1) // each worker runs the part below
		}
		scansPerRelation(c, b, out)
	}
}

// namedRelation is a table after FROM or JOIN in a statement's text, quoted
// as ent quotes it or bare as the compiled SQL writes it; a function call
// (jsonb_each_text(...)) is not a table.
var namedRelation = regexp.MustCompile(`(?i)\b(?:FROM|JOIN)\s+"?([a-z_][a-z0-9_]*)"?(\s*\()?`)

// namesPerRelation counts how many times the statement's text names each
// table.
func namesPerRelation(query string) map[string]int {
	out := map[string]int{}
	for _, m := range namedRelation.FindAllStringSubmatch(query, -1) {
		if m[2] == "" {
			out[m[1]]++
		}
	}
	return out
}

// explainAnalyzed runs a statement under EXPLAIN (ANALYZE, BUFFERS) and
// returns its plan and its execution's buffer hits.
func explainAnalyzed(t *testing.T, db queryRower, st apitest.Statement) (analyzedNode, int64) {
	t.Helper()
	var raw []byte
	require.NoError(t, db.QueryRowContext(context.Background(), "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+st.Query, st.Args...).Scan(&raw),
		"EXPLAIN %s", st.Query)
	var plans []struct {
		Plan analyzedNode `json:"Plan"`
	}
	require.NoError(t, json.Unmarshal(raw, &plans))
	require.Len(t, plans, 1)
	return plans[0].Plan, plans[0].Plan.SharedHits
}

// overScanned lists each table the plan scans more often than the text
// names it.
func overScanned(query string, plan analyzedNode) []string {
	named := namesPerRelation(query)
	scanned := map[string]float64{}
	scansPerRelation(plan, 1, scanned)
	var bad []string
	for rel, n := range scanned {
		if n > float64(named[rel]) {
			bad = append(bad, fmt.Sprintf("%s scanned %.4g times, named %d times", rel, n, named[rel]))
		}
	}
	sort.Strings(bad)
	return bad
}

// outline is a plan's tree, one node a line, for a failure's message.
func outline(n analyzedNode, depth int, b *strings.Builder) {
	fmt.Fprintf(b, "%s%s", strings.Repeat("  ", depth), n.NodeType)
	if n.Relation != "" {
		fmt.Fprintf(b, " on %s", n.Relation)
	}
	if n.Relationship == "InitPlan" || n.Relationship == "SubPlan" {
		fmt.Fprintf(b, " [%s]", n.SubplanName)
	}
	fmt.Fprintf(b, " (rows %.0f, loops %.0f)\n", n.Rows, n.Loops)
	for _, c := range n.Plans {
		outline(c, depth+1, b)
	}
}

// compiledStatement marks the statement of a compiled read: its columns
// of values are named gql1, gql2, … (the page with cursors: gql).
const compiledStatement = `AS "gql`

func TestEveryCompiledPageScansEachTableAsOftenAsItsStatementNamesIt(t *testing.T) {
	rec := &apitest.Recorder{}
	g := apitest.NewGrown(t, apitest.Recording(rec))
	// The benchmark's 20 sessions of 10 turns and 20 refs, newest, on top
	// of the grown rows, with statistics that know them.
	apitest.SessionGraph(t, g.Server, grown.Tenant, 20, 10, 20)
	_, err := g.DB.ExecContext(context.Background(), `ANALYZE`)
	require.NoError(t, err)
	client := g.WithKey(g.NewKey(t, "CLIENT", grown.Tenant))
	g.MustDo(t, `{ viewer { role } }`, nil, nil) // the keys' first requests look them up
	client.MustDo(t, `{ viewer { role } }`, nil, nil)

	var first struct {
		Sessions struct {
			PageInfo struct{ EndCursor string }
		}
	}
	g.MustDo(t, `{ sessions(first: 20) { pageInfo { endCursor } edges { node { id } } } }`, nil, &first)
	later := map[string]any{"c": first.Sessions.PageInfo.EndCursor}

	const nested = `id externalKey status currentTurn lastActiveAt
      turns(first: 10) { edges { node { number userMessage status startedAt } } }
      refs(first: 20) { edges { node { ref entityType label } } }`
	page := func(args, fields string) string {
		if strings.Contains(args, "$c") {
			return fmt.Sprintf(`query($c: Cursor) { sessions(%s) { %s } }`, args, fields)
		}
		return fmt.Sprintf(`{ sessions(%s) { %s } }`, args, fields)
	}
	edgesOnly := "edges { node { " + nested + " } }"
	withCursors := "pageInfo { hasNextPage endCursor } " + edgesOnly
	cases := []struct {
		name, query string
		vars        map[string]any
	}{
		{"the nested page, one row (no cursor selected)", page("first: 20", "pageInfo { hasNextPage } "+edgesOnly), nil},
		{"the nested page with cursors (the benchmark's)", sessionGraphPage, nil},
		{"the nested page, recently active first (the long sessions)", page("first: 20, orderBy: {field: LAST_ACTIVE_AT, direction: DESC}", edgesOnly), nil},
		{"the nested page, filtered", page(`first: 20, where: {status: ACTIVE, externalKeyHasPrefix: "acme-chat"}`, edgesOnly), nil},
		{"the nested page after a cursor", page("first: 20, after: $c", edgesOnly), later},
		{"the nested page after a cursor, with cursors", page("first: 20, after: $c", withCursors), later},
		{"the nested page before a cursor", page("last: 20, before: $c", withCursors), later},
		{"the nested page, last", page("last: 20", withCursors), nil},
		{"the nested page with totalCount", page("first: 20", "totalCount "+withCursors), nil},
		{"sessions(first: 20){ id }", sessionsIDsPage, nil},
		{"ids, oldest active first", page("first: 20, orderBy: {field: LAST_ACTIVE_AT, direction: ASC}", "edges { node { id } }"), nil},
		{"ids, filtered", page(`first: 20, where: {status: ACTIVE, currentTurnGT: 2}`, "edges { node { id } }"), nil},
		{"ids after a cursor", page("first: 20, after: $c", "edges { node { id } }"), later},
		{"ids before a cursor", page("first: 20, before: $c", "edges { node { id } }"), later},
		{"ids, last", page("last: 20", "edges { cursor node { id } }"), nil},
	}
	for _, who := range []struct {
		name string
		s    *apitest.Server
	}{{"admin", g.Server}, {"client", client}} {
		for _, c := range cases {
			stmts := rec.Record(func() { who.s.MustDo(t, c.query, c.vars, nil) })
			compiled := 0
			var hits int64
			for _, st := range stmts {
				if !explainable(st.Query) {
					continue
				}
				if strings.Contains(st.Query, compiledStatement) {
					compiled++
				}
				plan, h := explainAnalyzed(t, g.DB, st)
				hits += h
				if bad := overScanned(st.Query, plan); len(bad) > 0 {
					var b strings.Builder
					outline(plan, 2, &b)
					t.Errorf("%s, %s: %s\n    in: %s\n%s", who.name, c.name, strings.Join(bad, "; "), shorten(st.Query), b.String())
				}
			}
			require.Equal(t, 1, compiled, "%s, %s: compiled statements", who.name, c.name)
			t.Logf("%s, %s: %d statements, %d buffer hits", who.name, c.name, len(stmts), hits)
		}
	}
}

package graph_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

type sessionPage struct {
	Sessions struct {
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
	} `json:"sessions"`
}

func (p sessionPage) ids() []string {
	out := make([]string, len(p.Sessions.Edges))
	for i, e := range p.Sessions.Edges {
		out[i] = e.Node.ID
	}
	return out
}

const pageQuery = `query($first: Int, $after: Cursor, $last: Int, $before: Cursor, $orderBy: [SessionOrder!], $where: SessionWhereInput) {
  sessions(first: $first, after: $after, last: $last, before: $before, orderBy: $orderBy, where: $where) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id } }
  }
}`

func TestPaginationIsStableAcrossEqualTimestamps(t *testing.T) {
	s := apitest.New(t)
	seeded := seedSessions(t, s, "acme", 23)
	// Every session gets the same creation time: only the id tie-break orders them.
	same := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	setCreatedAt(t, s, same, seeded...)
	orderBy := []map[string]any{{"field": "CREATED_AT", "direction": "DESC"}}

	var forward []string
	vars := map[string]any{"first": 5, "orderBy": orderBy}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		var p sessionPage
		s.MustDo(t, pageQuery, vars, &p)
		assert.Equal(t, 23, p.Sessions.TotalCount)
		forward = append(forward, p.ids()...)
		if !p.Sessions.PageInfo.HasNextPage {
			break
		}
		vars["after"] = *p.Sessions.PageInfo.EndCursor
	}
	require.Len(t, forward, 23)
	assert.Len(t, uniq(forward), 23, "no session twice")

	var backward []string
	vars = map[string]any{"last": 5, "orderBy": orderBy}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		var p sessionPage
		s.MustDo(t, pageQuery, vars, &p)
		backward = append(p.ids(), backward...)
		if !p.Sessions.PageInfo.HasPreviousPage {
			break
		}
		vars["before"] = *p.Sessions.PageInfo.StartCursor
	}
	assert.Equal(t, forward, backward, "paging backward visits the same order")

	want := make([]string, len(seeded))
	for i, se := range seeded {
		want[i] = se.ID.String()
	}
	assert.ElementsMatch(t, want, forward)

	// A cursor taken from the middle resumes exactly after its node.
	var p sessionPage
	s.MustDo(t, pageQuery, map[string]any{"first": 3, "orderBy": orderBy}, &p)
	var next sessionPage
	s.MustDo(t, pageQuery, map[string]any{"first": 3, "after": p.Sessions.Edges[1].Cursor, "orderBy": orderBy}, &next)
	assert.Equal(t, forward[2:5], next.ids())
}

func TestSessionsOrderByManyFields(t *testing.T) {
	s := apitest.New(t)
	seeded := seedSessions(t, s, "acme", 6)
	ctx := access.System(context.Background())
	for i, se := range seeded {
		s.Client.Session.UpdateOne(se).SetTokenCount(100 * (i % 2)).SetCurrentTurn(i).ExecX(ctx)
	}
	var p sessionPage
	s.MustDo(t, pageQuery, map[string]any{"first": 10, "orderBy": []map[string]any{
		{"field": "TOKEN_COUNT", "direction": "DESC"}, {"field": "CURRENT_TURN", "direction": "ASC"}}}, &p)
	byID := map[string]int{}
	for i, se := range seeded {
		byID[se.ID.String()] = i
	}
	order := make([]int, 0, 6)
	for _, id := range p.ids() {
		order = append(order, byID[id])
	}
	assert.Equal(t, []int{1, 3, 5, 0, 2, 4}, order)
}

func TestSessionFilters(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	acme := seedSessions(t, s, "acme", 6)
	seedSessions(t, s, "globex", 2)
	old := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	s.Client.Session.UpdateOne(acme[0]).SetStatus(session.StatusExpired).SetLastActiveAt(old).ExecX(ctx)
	s.Client.Session.UpdateOne(acme[1]).SetLastActiveAt(old.AddDate(0, 1, 0)).ExecX(ctx)
	setCreatedAt(t, s, old, acme[0])
	setCreatedAt(t, s, old.AddDate(0, 1, 0), acme[1])

	count := func(where map[string]any) int {
		t.Helper()
		var p sessionPage
		s.MustDo(t, pageQuery, map[string]any{"first": 100, "where": where}, &p)
		assert.Len(t, p.Sessions.Edges, p.Sessions.TotalCount)
		return p.Sessions.TotalCount
	}
	assert.Equal(t, 8, count(nil))
	assert.Equal(t, 6, count(map[string]any{"tenant": "acme"}))
	assert.Equal(t, 1, count(map[string]any{"status": "EXPIRED"}))
	assert.Equal(t, 7, count(map[string]any{"statusNEQ": "EXPIRED"}))
	assert.Equal(t, 2, count(map[string]any{"tenant": "acme", "userID": "user-0"}))
	assert.Equal(t, 1, count(map[string]any{"externalKey": "acme-003"}))
	assert.Equal(t, 6, count(map[string]any{"externalKeyHasPrefix": "acme-"}))
	assert.Equal(t, 2, count(map[string]any{"createdAtLT": "2026-01-01T00:00:00Z"}))
	assert.Equal(t, 1, count(map[string]any{"createdAtGTE": "2025-06-15T00:00:00Z", "createdAtLT": "2026-01-01T00:00:00Z"}))
	assert.Equal(t, 6, count(map[string]any{"lastActiveAtGT": "2026-01-01T00:00:00Z"}))
	assert.Equal(t, 3, count(map[string]any{"or": []map[string]any{{"tenant": "globex"}, {"status": "EXPIRED"}}}))
}

func TestPageSizeLimits(t *testing.T) {
	s := apitest.New(t)
	seeded := seedSessions(t, s, "acme", 25)
	addTurns(t, s, seeded[0].ID, 30)

	for _, q := range []string{
		`{ sessions(first: 1000) { totalCount } }`,
		`{ sessions(last: 101) { totalCount } }`,
		`{ sessions(first: -1) { totalCount } }`,
		`{ sessions(first: 5) { edges { node { turns(first: 500) { totalCount } } } } }`,
	} {
		res := s.Do(t, q, nil)
		require.Len(t, res.Errors, 1, q)
		assert.Equal(t, "PAGINATION_LIMIT", res.Errors[0].Code(), q)
		assert.Contains(t, res.Errors[0].Message, "between 0 and 100")
		assert.Nil(t, res.Data, "nothing executed, so no data entry")
	}
	res := s.Do(t, `query($n: Int) { sessions(first: $n) { totalCount } }`, map[string]any{"n": 1000})
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "PAGINATION_LIMIT", res.Errors[0].Code(), "limits apply to variables too")

	assert.Equal(t, "INVALID_CURSOR", s.ErrorCode(t, `{ sessions(first: 5, after: "garbage") { totalCount } }`, nil))

	// Without first or last a connection gets the default page, nested ones too.
	var out struct {
		Sessions struct {
			PageInfo struct{ HasNextPage bool } `json:"pageInfo"`
			Edges    []struct {
				Node struct {
					ID    string `json:"id"`
					Turns struct {
						TotalCount int `json:"totalCount"`
						Edges      []struct {
							Node struct{ Number int } `json:"node"`
						} `json:"edges"`
					} `json:"turns"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"sessions"`
	}
	s.MustDo(t, `{ sessions { pageInfo { hasNextPage } edges { node { id turns { totalCount edges { node { number } } } } } } }`, nil, &out)
	assert.Len(t, out.Sessions.Edges, 20)
	assert.True(t, out.Sessions.PageInfo.HasNextPage)
	for _, e := range out.Sessions.Edges {
		if e.Node.ID == seeded[0].ID.String() {
			assert.Equal(t, 30, e.Node.Turns.TotalCount)
			assert.Len(t, e.Node.Turns.Edges, 20)
		}
	}
}

func uniq(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

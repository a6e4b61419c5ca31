package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// sessionGraphWithCount is the session graph page asking too for how many
// sessions there are in all.
var sessionGraphWithCount = strings.Replace(sessionGraphPage, "pageInfo {", "totalCount pageInfo {", 1)

// pageStatements serves query once on a server with sessions sessions of 10
// turns and 20 refs each, and returns the statements it cost and its data.
func pageStatements(t *testing.T, sessions int, query string) (int64, []byte) {
	s := apitest.New(t)
	apitest.SessionGraph(t, s, "acme", sessions, 10, 20)
	h := handlerClient{s: s}
	h.post(t, `{ viewer { role } }`, nil) // the key's first request looks it up
	before := s.Statements()
	body := h.post(t, query, nil)
	return s.Statements() - before, body
}

func TestSessionGraphPageCostsTheSameStatementsWhateverItsSize(t *testing.T) {
	few, fewBody := pageStatements(t, 5, sessionGraphPage)
	many, manyBody := pageStatements(t, 20, sessionGraphPage)
	assert.Equal(t, 5+5*30, countPageObjects(t, fewBody))
	assert.Equal(t, 20+20*30, countPageObjects(t, manyBody))
	assert.Equal(t, int64(1+apitest.AuthStatements), few, "one statement writes the sessions with their turns and refs (graph/compiled)")
	assert.Equal(t, few, many, "20 sessions cost what 5 do")
}

func TestTotalCountIsCountedOnlyWhenAsked(t *testing.T) {
	without, _ := pageStatements(t, 25, sessionGraphPage)
	with, body := pageStatements(t, 25, sessionGraphWithCount)
	assert.Equal(t, int64(1+apitest.AuthStatements), without, "pageInfo alone is settled from the page's extra row")
	assert.Equal(t, without+1, with, "totalCount adds one count")
	var page struct {
		Data struct {
			Sessions struct {
				TotalCount int `json:"totalCount"`
				PageInfo   struct {
					HasNextPage bool `json:"hasNextPage"`
				} `json:"pageInfo"`
				Edges []json.RawMessage `json:"edges"`
			} `json:"sessions"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &page))
	assert.Equal(t, 25, page.Data.Sessions.TotalCount)
	assert.True(t, page.Data.Sessions.PageInfo.HasNextPage)
	assert.Len(t, page.Data.Sessions.Edges, 20)
}

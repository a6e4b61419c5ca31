package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/graph"
	"sessiongraph/internal/apitest"
)

// postWithin posts query and requires an answer within limit.
func postWithin(t *testing.T, s *apitest.Server, limit time.Duration, query string, vars map[string]any) *apitest.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "no answer within %s", limit)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	out := &apitest.Response{Status: res.StatusCode}
	require.NoError(t, json.Unmarshal(raw, out), "%s", raw)
	return out
}

// A 1.6 KB query of 40 fragments that each spread the next twice selects
// 2^40 leaves. It is refused as too complex at once, and the same document
// with a leaf that costs nothing is answered at once: nothing between the
// socket and the resolvers follows a fragment at each of its spreads (the
// cost measure did, and would have taken hours; 23 levels took 1.8 s).
func TestFragmentsSpreadTwiceAnswerAtOnce(t *testing.T) {
	s := apitest.New(t)
	costly := graph.DoublingFragments(40, `sessions(first: 1) { totalCount }`)
	require.Less(t, len(costly), 2000)

	res := postWithin(t, s, 10*time.Second, costly, nil)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "QUERY_TOO_COMPLEX", res.Errors[0].Code())
	assert.Contains(t, res.Errors[0].Message, fmt.Sprintf("may cost %d ", 2<<40))
	assert.Nil(t, res.Data)

	free := postWithin(t, s, 10*time.Second, graph.DoublingFragments(40, `__typename`), nil)
	require.Empty(t, free.Errors)
	assert.JSONEq(t, `{"__typename": "Query"}`, string(free.Data))
}

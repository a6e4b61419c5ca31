package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// flatOr is a where filter, as JSON, whose or holds n empty filters.
func flatOr(n int) string {
	return `{"or": [` + strings.Repeat(`{},`, n-1) + `{}]}`
}

// orOfOrs is a where filter, as JSON, whose or holds outer filters that
// each hold an or of 999 empty ones: every list within the list limit.
func orOfOrs(outer int) string {
	inner := `{"or": [` + strings.Repeat(`{},`, 998) + `{}]}`
	return `{"or": [` + strings.Repeat(inner+",", outer-1) + inner + `]}`
}

// expireWhere expires the sessions its where filter $w matches: a write, so
// that a refusal is seen to change nothing.
const expireWhere = `mutation($w: SessionWhereInput!) { expireSessions(input: {where: $w}) { count } }`

// postRaw posts a request body as it is and requires the whole answer
// within limit; over SSE (sse), the answer is the data of the stream's
// next event.
func postRaw(t *testing.T, s *apitest.Server, limit time.Duration, body string, sse bool) *apitest.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if sse {
		req.Header.Set("Accept", "text/event-stream")
	}
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "no answer within %s", limit)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err, "no whole answer within %s", limit)
	if sse {
		_, next, ok := strings.Cut(string(raw), "event: next\ndata: ")
		require.True(t, ok, "%.300s", raw)
		raw = []byte(strings.SplitN(next, "\n", 2)[0])
	}
	out := &apitest.Response{Status: res.StatusCode}
	require.NoError(t, json.Unmarshal(raw, out), "%.300s", raw)
	return out
}

// operation is a request body: query with the variable w as raw JSON.
func operation(query, w string) string {
	q, _ := json.Marshal(query)
	return fmt.Sprintf(`{"query": %s, "variables": {"w": %s}}`, q, w)
}

// A variable's size and shape are checked before gqlparser coerces it,
// whatever the transport: coercion visits every field of an input object's
// type, and a 1.8 MB or of 600,000 {} took it most of a minute of CPU
// before the list limit, checked after it, refused the list. An or of
// 1,000-item ors, within every list limit, is refused by its number of
// input objects. Each answers at once, over POST, SSE and WebSocket, and
// expires nothing.
func TestOversizeVariablesAreRefusedBeforeTheyAreCoerced(t *testing.T) {
	s := apitest.New(t)
	seedSessions(t, s, "acme", 2)
	before := dataDigest(t, s)
	const flatRefusal = "where.or has 600000 items; at most 1000 are allowed: split the call"
	const nestedRefusal = "the arguments of this operation hold more than 4000 input objects (a variable used twice counts twice): split it"

	for _, sse := range []bool{false, true} {
		noData := "" // refused before it ran: no data entry, or null over SSE
		if sse {
			noData = "null"
		}
		flat := postRaw(t, s, 10*time.Second, operation(expireWhere, flatOr(600_000)), sse)
		require.Len(t, flat.Errors, 1)
		assert.Equal(t, "INPUT_TOO_LARGE", flat.Errors[0].Code())
		assert.Equal(t, "where.or", flat.Errors[0].Extensions["field"])
		assert.Equal(t, flatRefusal, flat.Errors[0].Message)
		assert.Equal(t, noData, string(flat.Data))

		nested := postRaw(t, s, 10*time.Second, operation(expireWhere, orOfOrs(600)), sse)
		require.Len(t, nested.Errors, 1)
		assert.Equal(t, "INPUT_TOO_LARGE", nested.Errors[0].Code())
		// The input, the top filter and four outer ones of 1 + 999 objects
		// make 4,002.
		assert.Equal(t, "where.or[3].or[997]", nested.Errors[0].Extensions["field"])
		assert.Equal(t, nestedRefusal, nested.Errors[0].Message)
		assert.Equal(t, noData, string(nested.Data))
	}

	// A WebSocket message is at most 1 MB: 300,000 {} and 300 ors of 999.
	ws := s.DialWS(t, nil)
	for i, c := range []struct{ w, field, message string }{
		{flatOr(300_000), "where.or", strings.Replace(flatRefusal, "600000", "300000", 1)},
		{orOfOrs(300), "where.or[3].or[997]", nestedRefusal},
	} {
		id := fmt.Sprint(i + 1)
		ws.Send(apitest.Message{ID: id, Type: "subscribe", Payload: json.RawMessage(operation(expireWhere, c.w))})
		m := ws.Read(10 * time.Second)
		require.Equal(t, apitest.Message{ID: id, Type: "next", Payload: m.Payload}, m)
		var res apitest.Response
		require.NoError(t, json.Unmarshal(m.Payload, &res))
		require.Len(t, res.Errors, 1)
		assert.Equal(t, "INPUT_TOO_LARGE", res.Errors[0].Code())
		assert.Equal(t, c.field, res.Errors[0].Extensions["field"])
		assert.Equal(t, c.message, res.Errors[0].Message)
		assert.Equal(t, "null", string(res.Data))
		assert.Equal(t, apitest.Message{ID: id, Type: "complete"}, ws.Read(10*time.Second))
	}
	assert.Equal(t, before, dataDigest(t, s), "nothing expired")

	// A filter within every limit is taken.
	ok := postRaw(t, s, 10*time.Second, operation(`query($w: SessionWhereInput) { sessions(where: $w) { totalCount } }`, flatOr(1000)), false)
	require.Empty(t, ok.Errors)
	assert.JSONEq(t, `{"sessions": {"totalCount": 2}}`, string(ok.Data))
}

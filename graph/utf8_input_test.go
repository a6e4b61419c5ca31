package graph_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// sendRaw sends body byte for byte (json.Marshal would have replaced what
// is not UTF-8) and returns the status and the decoded answer.
func sendRaw(t *testing.T, s *apitest.Server, method, target string, body []byte) (int, apitest.Response) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+target, bytes.NewReader(body))
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out apitest.Response
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return res.StatusCode, out
}

// Text that is not UTF-8 (a raw 0xFF, an overlong form, an encoded or an
// escaped lone surrogate) is refused with BAD_USER_INPUT and the field it
// is in, never stored as U+FFFD: two such external keys used to open one
// session.
func TestTextThatIsNotUTF8IsRefusedNotReplaced(t *testing.T) {
	s := apitest.New(t)
	query, err := json.Marshal(openSession)
	require.NoError(t, err)
	for _, key := range []string{"k\xff", "k\xfe", "k\xc0\xaf", "k\xed\xa0\x80", `k\ud800`, `k\udfff\ud800`} {
		body := []byte(`{"query":` + string(query) + `,"variables":{"in":{"tenant":"acme","externalKey":"` + key + `"}}}`)
		status, res := sendRaw(t, s, http.MethodPost, "/graphql", body)
		assert.Equal(t, http.StatusBadRequest, status, "%q", key)
		require.Len(t, res.Errors, 1, "%q", key)
		assert.Equal(t, "BAD_USER_INPUT", res.Errors[0].Code(), "%q", key)
		assert.Equal(t, "variables.in.externalKey", res.Errors[0].Extensions["field"], "%q", key)
	}
	// In the query text, and over GET.
	status, res := sendRaw(t, s, http.MethodPost, "/graphql",
		[]byte("{\"query\":\"mutation { openSession(input: {tenant: \\\"acme\\\", externalKey: \\\"k\xff\\\"}) { created } }\"}"))
	assert.Equal(t, http.StatusBadRequest, status)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "query", res.Errors[0].Extensions["field"])
	status, res = sendRaw(t, s, http.MethodGet, "/graphql?query="+url.QueryEscape(`query($id: ID!) { session(id: $id) { id } }`)+
		"&variables="+url.QueryEscape(`{"id":"\udc00"}`), nil)
	assert.Equal(t, http.StatusBadRequest, status)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "variables.id", res.Errors[0].Extensions["field"])

	// A real U+FFFD is text like any other, and opens its own session.
	var opened openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "k\ufffd"}}, &opened)
	assert.True(t, opened.OpenSession.Created)
	var page struct{ Sessions struct{ TotalCount int } }
	s.MustDo(t, `{ sessions { totalCount } }`, nil, &page)
	assert.Equal(t, 1, page.Sessions.TotalCount, "nothing else was stored")
}

// Over WebSocket a message with such text closes the socket 4400, naming
// where it was.
func TestASubscribeMessageThatIsNotUTF8ClosesTheSocket(t *testing.T) {
	s := apitest.New(t)
	ws := s.DialWS(t, nil)
	ws.Send(apitest.Message{Type: "subscribe", ID: "1",
		Payload: json.RawMessage(`{"query":"subscription($id: ID!) { sessionEvents(sessionID: $id) { kind } }","variables":{"id":"\ud800"}}`)})
	_, err := ws.TryRead(20 * time.Second)
	var ce websocket.CloseError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, websocket.StatusCode(4400), ce.Code)
	assert.True(t, strings.HasPrefix(ce.Reason, "Invalid message: payload.variables.id is not valid UTF-8"), ce.Reason)
}

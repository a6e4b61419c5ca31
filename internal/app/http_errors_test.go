package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// httpAnswer is what a raw request got back.
type httpAnswer struct {
	status      int
	contentType string
	allow       string
	body        map[string]any
	size        int
}

func (a httpAnswer) code(t *testing.T) string {
	t.Helper()
	errs, ok := a.body["errors"].([]any)
	require.True(t, ok, "a GraphQL response with errors: %v", a.body)
	require.Len(t, errs, 1)
	code, _ := errs[0].(map[string]any)["extensions"].(map[string]any)["code"].(string)
	return code
}

func (a httpAnswer) message(t *testing.T) string {
	t.Helper()
	return a.body["errors"].([]any)[0].(map[string]any)["message"].(string)
}

// send makes a raw HTTP request to /graphql with the server's key.
func send(t *testing.T, s *apitest.Server, method, target, contentType, accept, body string) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/graphql"+target, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	a := httpAnswer{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), allow: res.Header.Get("Allow"), size: len(raw)}
	require.NoError(t, json.Unmarshal(raw, &a.body), "a JSON body: %q", raw)
	return a
}

const jsonType = "application/json"

// A 1.9 MB body that is not JSON gets a short answer that quotes none of it.
func TestAMalformedBodyIsNotEchoed(t *testing.T) {
	s := apitest.New(t)
	body := `{"query": "` + strings.Repeat("x", 1900<<10)
	a := send(t, s, http.MethodPost, "", jsonType, "", body)
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.Equal(t, "INVALID_REQUEST", a.code(t))
	assert.Equal(t, "the request body is not valid JSON: it ends before the object does", a.message(t))
	assert.Less(t, a.size, 200)

	a = send(t, s, http.MethodPost, "", jsonType, "text/event-stream", `{"query": subscription }`)
	assert.Equal(t, http.StatusBadRequest, a.status, "SSE checks its body the same way")
	assert.Equal(t, "the request body is not valid JSON: invalid character 's' looking for beginning of value at byte 11", a.message(t))
}

func TestBytesAfterTheJSONObjectAreRefused(t *testing.T) {
	s := apitest.New(t)
	for _, body := range []string{
		`{"query":"{ viewer { role } }"} {"query":"mutation { deleteSession(id: \"x\") { id } }"}`,
		`{"query":"{ viewer { role } }"}garbage`,
		`{"query":"{ viewer { role } }"}}`,
	} {
		a := send(t, s, http.MethodPost, "", jsonType, "", body)
		assert.Equal(t, http.StatusBadRequest, a.status, body)
		assert.Equal(t, "INVALID_REQUEST", a.code(t), body)
		assert.Equal(t, "the request body continues after its JSON object (at byte 31): send exactly one object", a.message(t), body)
	}
	a := send(t, s, http.MethodPost, "", jsonType, "", "  {\"query\":\"{ viewer { role } }\"}\n\t ")
	assert.Equal(t, http.StatusOK, a.status, "whitespace around the object is fine")
	assert.Equal(t, map[string]any{"data": map[string]any{"viewer": map[string]any{"role": "ADMIN"}}}, a.body)
}

// Every answer that HTTP itself refuses is a GraphQL response whose one
// error has a code, and none carries a data entry.
func TestEveryHTTPErrorIsAGraphQLResponseWithACode(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.MaxBodyBytes = 1000 })
	for _, c := range []struct {
		name                       string
		key                        string
		method, target, ctype, acc string
		body                       string
		status                     int
		code, message, allow       string
	}{
		{"no key", "", "POST", "", jsonType, "", `{"query":"{ viewer { role } }"}`, 401, "UNAUTHENTICATED", "", ""},
		{"too large", s.Key, "POST", "", jsonType, "", `{"query":"` + strings.Repeat(" ", 1000) + `"}`, 413, "REQUEST_TOO_LARGE", "the request body is over 1000 bytes; send less at once", ""},
		{"batch", s.Key, "POST", "", jsonType, "", `[{"query":"{ viewer { role } }"}]`, 400, "BATCHING_DISABLED", "", ""},
		{"empty body", s.Key, "POST", "", jsonType, "", ``, 400, "INVALID_REQUEST", `the request body is empty: send a JSON object such as {"query": "{ viewer { role } }"}`, ""},
		{"not an object", s.Key, "POST", "", jsonType, "", `"{ viewer { role } }"`, 400, "INVALID_REQUEST", `the request body must be a JSON object {"query": ...}, not string`, ""},
		{"no query", s.Key, "POST", "", jsonType, "", `{"qeury":"{ viewer { role } }"}`, 400, "INVALID_REQUEST", `the request has no query: send {"query": "..."}`, ""},
		{"query not a string", s.Key, "POST", "", jsonType, "", `{"query":{"obj":"ect"}}`, 400, "INVALID_REQUEST", "the query parameter must be a string", ""},
		{"variables not an object", s.Key, "POST", "", jsonType, "", `{"query":"{ viewer { role } }","variables":"x"}`, 400, "INVALID_REQUEST", "the variables parameter must be an object", ""},
		{"GET bad variables", s.Key, "GET", "?query=%7B__typename%7D&variables=%7B", "", "", "", 400, "INVALID_REQUEST", "the variables parameter is not valid JSON", ""},
		{"GET mutation", s.Key, "GET", "?query=mutation%7B__typename%7D", "", "", "", 405, "METHOD_NOT_ALLOWED", "GET requests only allow query operations: send a mutation as POST", "POST"},
		{"GET subscription", s.Key, "GET", "?query=subscription%7BsessionsChanged%7Bsequence%7D%7D", "", "", "", 405, "METHOD_NOT_ALLOWED", "a subscription cannot run over GET: subscribe over WebSocket (graphql-transport-ws) or SSE", "POST"},
		{"form post", s.Key, "POST", "", "application/x-www-form-urlencoded", "", `query=mutation`, 415, "UNSUPPORTED_MEDIA_TYPE", `a POST body must be JSON, sent with 'Content-Type: application/json' (got "application/x-www-form-urlencoded")`, ""},
		{"no content type", s.Key, "POST", "", "", "", `{"query":"{ viewer { role } }"}`, 415, "UNSUPPORTED_MEDIA_TYPE", `a POST body must be JSON, sent with 'Content-Type: application/json' (got "")`, ""},
		{"PUT", s.Key, "PUT", "", jsonType, "", `{"query":"{ viewer { role } }"}`, 405, "METHOD_NOT_ALLOWED", "PUT is not a GraphQL method: send queries as GET or POST, mutations as POST", "GET, POST, OPTIONS"},
	} {
		a := send(t, s.WithKey(c.key), c.method, c.target, c.ctype, c.acc, c.body)
		assert.Equal(t, c.status, a.status, c.name)
		assert.Equal(t, c.code, a.code(t), c.name)
		if c.message != "" {
			assert.Equal(t, c.message, a.message(t), c.name)
		}
		assert.Equal(t, c.allow, a.allow, c.name)
		assert.NotContains(t, a.body, "data", c.name)
		assert.Contains(t, a.contentType, "application/json", c.name)
	}
}

// A request that fails to parse, validate or coerce its variables is a
// 200 with errors for a client that accepts application/json, and a 400
// with no data entry for one that accepts application/graphql-response+json.
func TestRequestErrorsAnswerByTheAcceptedMediaType(t *testing.T) {
	s := apitest.New(t)
	for _, c := range []struct {
		name, body, code string
	}{
		{"parse", `{"query":"{"}`, "GRAPHQL_PARSE_FAILED"},
		{"validate", `{"query":"{ noSuchField }"}`, "GRAPHQL_VALIDATION_FAILED"},
		{"coerce", `{"query":"query Q($id: ID!) { session(id: $id) { id } }","variables":{"id":null}}`, "GRAPHQL_VALIDATION_FAILED"},
		{"limit", `{"query":"{ a: viewer { role } b: viewer { role } c: viewer { role } d: viewer { role } e: viewer { role } f: viewer { role } g: viewer { role } h: viewer { role } i: viewer { role } j: viewer { role } k: viewer { role } l: viewer { role } m: viewer { role } n: viewer { role } o: viewer { role } p: viewer { role } q: viewer { role } r: viewer { role } s: viewer { role } t: viewer { role } u: viewer { role } }"}`, "TOO_MANY_ROOT_FIELDS"},
	} {
		for _, accept := range []string{"", "application/json", "*/*"} {
			a := send(t, s, http.MethodPost, "", jsonType, accept, c.body)
			assert.Equal(t, http.StatusOK, a.status, "%s, Accept %q", c.name, accept)
			assert.Equal(t, c.code, a.code(t), c.name)
			assert.NotContains(t, a.body, "data", "%s: the operation never ran", c.name)
			assert.Equal(t, "application/json; charset=utf-8", a.contentType)
		}
		a := send(t, s, http.MethodPost, "", jsonType, "application/graphql-response+json, application/json;q=0.9", c.body)
		assert.Equal(t, http.StatusBadRequest, a.status, c.name)
		assert.Equal(t, c.code, a.code(t), c.name)
		assert.NotContains(t, a.body, "data", c.name)
		assert.Equal(t, "application/graphql-response+json; charset=utf-8", a.contentType)
	}

	// An error while the operation runs is a field error: 200, with data.
	a := send(t, s, http.MethodPost, "", jsonType, "application/graphql-response+json",
		`{"query":"{ session(id: \"00000000-0000-4000-8000-000000000000\") { id } }"}`)
	assert.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, "NOT_FOUND", a.code(t))
	assert.Contains(t, a.body, "data")
}

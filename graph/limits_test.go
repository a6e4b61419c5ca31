package graph_test

import (
	"bytes"
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

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

func TestOperationLimitsAnswerWithTheirCodes(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.Limits.MaxDepth = 7 })
	aliases, roots := make([]string, 31), make([]string, 21)
	for i := range aliases {
		aliases[i] = fmt.Sprintf("a%d: sessions(first: 1) { totalCount }", i)
	}
	for i := range roots {
		roots[i] = "sessions(first: 1) { totalCount }"
	}
	for code, query := range map[string]string{
		"QUERY_TOO_DEEP":       `{ sessions(first: 1) { edges { node { refs(first: 1) { edges { node { artifact { ref { label } } } } } } } } }`,
		"TOO_MANY_ALIASES":     "{ " + strings.Join(aliases, " ") + " }",
		"TOO_MANY_ROOT_FIELDS": "{ " + strings.Join(roots, " ") + " }",
		"QUERY_TOO_COMPLEX":    `{ sessions(first: 100) { edges { node { refs(first: 100) { edges { node { ref label action entityType turnCreated } } } } } } }`,
	} {
		res := s.Do(t, query, nil)
		require.Len(t, res.Errors, 1, code)
		assert.Equal(t, code, res.Errors[0].Code())
		assert.Nil(t, res.Data, "%s: nothing executed, so no data entry", code)
	}
	ok := s.Do(t, `{ sessions(first: 20) { edges { node { refs(first: 10) { edges { node { ref } } } } } } }`, nil)
	assert.Empty(t, ok.Errors, "a frontend's session page is well within the limits")
}

func TestRequestLimits(t *testing.T) {
	s := apitest.New(t)
	post := func(contentType string, body []byte) (*http.Response, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		s.Authorize(req) // with a valid key: what refuses these is the limit, not the key
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return res, out
	}
	codeOf := func(out map[string]any) string {
		errs, _ := out["errors"].([]any)
		require.NotEmpty(t, errs, "%v", out)
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		code, _ := ext["code"].(string)
		return code
	}

	big, _ := json.Marshal(map[string]any{"query": "{ __typename }", "variables": map[string]any{"pad": strings.Repeat("x", 2<<20)}})
	res, out := post("application/json", big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	assert.Equal(t, "REQUEST_TOO_LARGE", codeOf(out))

	res, out = post("application/json", []byte(`[{"query":"{ __typename }"},{"query":"{ __typename }"}]`))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Equal(t, "BATCHING_DISABLED", codeOf(out))

	res, _ = post("application/x-www-form-urlencoded", []byte(`query=mutation{openSession(input:{tenant:"t",externalKey:"k"}){created}}`))
	assert.GreaterOrEqual(t, res.StatusCode, 400, "no cross-site form posts")
	assert.NotEqual(t, http.StatusUnauthorized, res.StatusCode, "refused for its content type, not its key")
	var n int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n))
	assert.Zero(t, n)

	tokens := "{ " + strings.Repeat("__typename ", 16000) + "}"
	r := s.Do(t, tokens, nil)
	require.NotEmpty(t, r.Errors)
	assert.Equal(t, "GRAPHQL_PARSE_FAILED", r.Errors[0].Code())
	assert.Contains(t, r.Errors[0].Message, "token limit")
}

// A request past its deadline is cancelled with its database work: the
// statement it was waiting in does not linger in PostgreSQL.
func TestDeadlineCancelsTheRunningQuery(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.RequestTimeout = 300 * time.Millisecond })
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "slow"}).OpenSession.Session.ID
	ctx := access.System(context.Background())
	holder, err := s.DB.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer holder.Rollback()
	_, err = holder.Exec(`SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, id) // the write will wait on this lock
	require.NoError(t, err)

	// The lock is held until the test ends, so an answer at all is the
	// deadline's doing, not the lock's release.
	res := s.Do(t, updateSession, map[string]any{"in": map[string]any{"id": id, "historySummary": "late"}})
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "TIMEOUT", res.Errors[0].Code())

	var waiting int
	require.Eventually(t, func() bool {
		require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND query LIKE '%FOR UPDATE%' AND pid <> pg_backend_pid()`).Scan(&waiting))
		return waiting == 0
	}, 5*time.Second, 50*time.Millisecond, "the cancelled statement is gone from pg_stat_activity")
	require.NoError(t, holder.Rollback())
	var summary string
	require.NoError(t, s.DB.QueryRow(`SELECT history_summary FROM sessions WHERE id = $1`, id).Scan(&summary))
	assert.Empty(t, summary, "the cancelled write changed nothing")
}

// TestIntrospectionAndSuggestionsAreOffUnlessEnabled: by default the schema
// cannot be listed and a misspelt field gets no "Did you mean"; with
// -introspection both come back.
func TestIntrospectionAndSuggestionsAreOffUnlessEnabled(t *testing.T) {
	const schema = `{ __schema { queryType { name } } }`
	const misspelt = `{ sesions { totalCount } }`

	closed := apitest.New(t)
	for _, q := range []string{schema, `{ __type(name: "Session") { name } }`,
		`{ ...Q } fragment Q on Query { ... on Query { __schema { types { name } } } }`} {
		res := closed.Do(t, q, nil)
		require.Len(t, res.Errors, 1, q)
		assert.Equal(t, "INTROSPECTION_DISABLED", res.Errors[0].Code(), q)
		assert.Contains(t, res.Errors[0].Message, "-introspection")
		assert.Nil(t, res.Data, "nothing ran, so no data entry")
	}
	res := closed.Do(t, `{ __typename }`, nil)
	assert.Empty(t, res.Errors, "__typename is not introspection")
	res = closed.Do(t, misspelt, nil)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "GRAPHQL_VALIDATION_FAILED", res.Errors[0].Code())
	assert.NotContains(t, res.Errors[0].Message, "Did you mean", "no suggestion names a field")

	open := apitest.New(t, func(c *app.Config) { c.Introspection = true })
	var out struct {
		Schema struct{ QueryType struct{ Name string } } `json:"__schema"`
	}
	open.MustDo(t, schema, nil, &out)
	assert.Equal(t, "Query", out.Schema.QueryType.Name)
	res = open.Do(t, misspelt, nil)
	require.Len(t, res.Errors, 1)
	assert.Contains(t, res.Errors[0].Message, `Did you mean "sessions"`)
}

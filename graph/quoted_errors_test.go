package graph_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// Errors about a name or value the client sent quote its first 120 bytes,
// never the whole of it: a 200 KB name used to come back whole.
func TestErrorsQuoteAtMost120BytesOfTheInput(t *testing.T) {
	s := apitest.New(t)
	name := "Z" + strings.Repeat("a", 200_000)
	value := "Z" + strings.Repeat("é", 100_000) // 200 KB, cut at a rune boundary
	for _, c := range []struct {
		what, query, operationName string
		vars                       map[string]any
	}{
		{what: "unknown operationName", query: `query A { viewer { role } }`, operationName: name},
		{what: "bad enum variable", query: `mutation($r: APIKeyRole!) { createAPIKey(input: {name: "x", role: $r}) { key } }`, vars: map[string]any{"r": value}},
		{what: "unknown field", query: `{ ` + name + ` }`},
		{what: "unknown fragment", query: `{ ...` + name + ` }`},
		{what: "unknown argument", query: `{ viewer(` + name + `: 1) { role } }`},
	} {
		body := map[string]any{"query": c.query, "variables": c.vars}
		if c.operationName != "" {
			body["operationName"] = c.operationName
		}
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		_, res := sendRaw(t, s, http.MethodPost, "/graphql", raw)
		require.NotEmpty(t, res.Errors, c.what)
		for _, e := range res.Errors {
			assert.Less(t, len(e.Message), 400, "%s: %.300s", c.what, e.Message)
			cut := "Z" + strings.Repeat("a", 119) + "…"
			if c.vars != nil {
				cut = "Z" + strings.Repeat("é", 59) + "…"
			}
			assert.Contains(t, e.Message, cut, c.what)
			assert.NotEqual(t, "INTERNAL", e.Code(), c.what)
		}
	}
}

package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// Every 401 says how to authenticate (RFC 6750): with a bearer key in the
// realm of the server, and, for a key that is not one, that the token is
// invalid. Its message speaks of the ways of its own route: GraphQL's of
// the header and of WebSocket's connection_init, MCP's and the metrics'
// only of the header.
func TestA401SaysHowToAuthenticateOnItsRoute(t *testing.T) {
	s := apitest.New(t)
	const header = "this request needs an API key: send the header 'Authorization: Bearer <key>'"
	const socket = header + ` (or, on a WebSocket, the connection_init payload {"Authorization": "Bearer <key>"})`
	const notAKey = `this API key is not valid: sessiongraph keys start with "sg_"`
	for _, c := range []struct {
		method, path, body, authorization string
		challenge, message                string
	}{
		{"POST", "/graphql", `{"query":"{ __typename }"}`, "", `Bearer realm="sessiongraph"`, socket},
		{"POST", "/graphql", `{"query":"{ __typename }"}`, "Bearer not_a_key", `Bearer realm="sessiongraph", error="invalid_token"`, notAKey},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "", `Bearer realm="sessiongraph"`, header},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Basic YTpi", `Bearer realm="sessiongraph"`, header},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Bearer not_a_key", `Bearer realm="sessiongraph", error="invalid_token"`, notAKey},
		{"GET", "/metrics", "", "", `Bearer realm="sessiongraph"`, header},
	} {
		t.Run(c.path+" "+c.authorization, func(t *testing.T) {
			req, err := http.NewRequest(c.method, s.URL+c.path, strings.NewReader(c.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.authorization != "" {
				req.Header.Set("Authorization", c.authorization)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
			assert.Equal(t, []string{c.challenge}, res.Header.Values("WWW-Authenticate"))
			var body struct {
				Errors []struct {
					Message    string
					Extensions struct{ Code string }
				}
			}
			require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
			require.Len(t, body.Errors, 1)
			assert.Equal(t, "UNAUTHENTICATED", body.Errors[0].Extensions.Code)
			assert.Equal(t, c.message, body.Errors[0].Message)
		})
	}
}

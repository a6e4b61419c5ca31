// Package mcpserver serves the agent loop over the Model Context Protocol
// (streamable HTTP, the official Go SDK): the same engine as the GraphQL
// resolvers, with the same keys, roles, tenant confinement, error codes and
// limits. It knows nothing of GraphQL and never calls the server's own API.
package mcpserver

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sessiongraph/internal/access"
	"sessiongraph/internal/engine"
)

// Config is what the MCP endpoint needs from the server.
type Config struct {
	Engine *engine.Engine
	Logger *slog.Logger
	// Admission admits each tool call and resource read, as it admits
	// every GraphQL operation (nil: each within its key's role only).
	Admission *access.Admission
	// MaxBodyBytes bounds a request body, as for GraphQL.
	MaxBodyBytes int64
	// Version is what the server reports itself as in initialize.
	Version string
}

// principalKey is where the bearer check leaves the request's principal in
// the SDK's token info, which reaches every handler through the request.
const principalKey = "sessiongraph.principal"

// Handler serves MCP at the path it is mounted on. It must sit behind the
// server's authentication, which has already refused a request without a
// valid key (401, UNAUTHENTICATED) and put its principal in the context.
//
// It is stateless: each POST carries everything its call needs, so any
// replica behind a load balancer answers it, as with GraphQL, and no MCP
// session outlives a request (the agent's session is the sessiongraph one,
// named in each call).
func Handler(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := NewServer(cfg)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              cfg.Logger,
		MaxRequestBodyBytes: cfg.MaxBodyBytes,
		// The protection is for local servers that take requests without
		// credentials; every request here carries an API key, and behind a
		// reverse proxy on the same host it would refuse every request
		// that names the public host.
		DisableLocalhostProtection: true,
	})
	// The SDK's bearer middleware carries the principal to the handlers in
	// its token info; the key itself was checked before, by the server.
	carry := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := access.FromContext(ctx)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.KeyID.String(), Extra: map[string]any{principalKey: p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return checkMessages(cfg.Logger, cfg.MaxBodyBytes, carry(h))
}

// NewServer is the MCP server with every tool and resource, before any
// transport.
func NewServer(cfg Config) *mcp.Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "sessiongraph", Title: "sessiongraph", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       cfg.Logger,
		// Every replica serves the same tools and resources, and a stateless
		// server has no session to tell of a change: no listChanged.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
	})
	t := &tools{engine: cfg.Engine}
	t.add(s)
	addResources(s, cfg.Engine)
	s.AddReceivingMiddleware(confine(cfg, t))
	return s
}

// instructions tell a host's model how the tools fit together.
const instructions = `sessiongraph keeps the working memory of an agent's conversation.
Open a session (open_session) with your tenant and a key of your own, then per user message:
begin_turn; record what your database layer read (record_read), what you generated (record_generated)
and what you saved (record_created, naming the gen ref it saves); build each node's context
(build_context: UNDERSTAND, THINK, ACT, REPLY or MESSAGES) for your prompts; end_turn with the reply,
or fail_turn. The LLM sees refs such as recipe_1 and gen_meal_plan_1, never UUIDs: resolve_refs,
translate_payload and translate_filters turn refs back into ids for your code.
A failed call's text starts with a stable code (e.g. SESSION_EXPIRED: ..., REF_NOT_FOUND: ...); _meta["sessiongraph/error"] holds it as {code, message, field}.`

package graph

import (
	"context"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"sessiongraph/graph/generated"
	"sessiongraph/graph/wsproto"
	"sessiongraph/internal/access"
	"sessiongraph/internal/config"
)

// ServerConfig configures the GraphQL endpoint.
type ServerConfig struct {
	Resolver *Resolver
	Logger   *slog.Logger
	// Introspection enables __schema and __type queries (off in production).
	Introspection bool
	// CompiledReads answers the pages it can with one statement that writes
	// their JSON (graph/compiled); off, gqlgen executes every field.
	CompiledReads bool
	// AllowedOrigins are host patterns (path.Match syntax, such as
	// "*.example.com") of other origins whose pages may open a WebSocket;
	// the server's own origin is always allowed.
	AllowedOrigins []string
	Pages          PageLimits
	Limits         Limits
	Metrics        *Metrics
	// TokenLimit bounds the tokens gqlparser reads from one query.
	TokenLimit int
	// Subscriptions caps live subscriptions (config.Defaults has the
	// defaults).
	Subscriptions config.SubscriptionLimits
	// Admission admits every operation, over every transport (fairness.go);
	// nil admits all within their key's role.
	Admission *access.Admission
	// MutationTimeout, when set, lets a mutation sent over a WebSocket run
	// to its end even when its socket closes first (0: it ends with its
	// socket), as a POST's does whatever its client does.
	MutationTimeout time.Duration
	// TracerProvider, when set, makes operations and root fields spans.
	TracerProvider trace.TracerProvider
	// GoingAway, when announced, ends every subscription so that its client
	// resumes elsewhere (nil: subscriptions end only with their client).
	GoingAway *GoingAway
}

// NewServer returns the GraphQL handler with explicit transports: SSE and
// WebSocket (graphql-transport-ws) for subscriptions, GET for queries only,
// POST for everything.
func NewServer(cfg ServerConfig) *handler.Server {
	resolver := *cfg.Resolver
	resolver.CompiledReads = cfg.CompiledReads
	srv := handler.New(generated.NewExecutableSchema(generated.Config{
		Resolvers:  &resolver,
		Directives: generated.DirectiveRoot{Admin: adminOnly, MatchEverythingWhenEmpty: matchEverythingWhenEmpty},
	}))
	subscriptions := newSubscriptionCounts(cfg.Subscriptions)
	authenticate := authenticateSocket(cfg.Resolver.Keys)
	admission := cfg.Admission
	if admission == nil {
		admission = &access.Admission{}
	}
	goingAway := cfg.GoingAway
	if goingAway == nil {
		goingAway = NewGoingAway()
	}
	// graphql-transport-ws with the protocol's close codes (gqlgen's own
	// transport does not use them).
	srv.AddTransport(&wsproto.Transport{
		Init: func(ctx context.Context, payload map[string]any) (context.Context, error) {
			ctx, err := authenticate(ctx, payload)
			if err != nil {
				return nil, err
			}
			return onSocket(ctx), nil
		},
		Admit:           subscriptions.admit,
		InitTimeout:     3 * time.Second,
		PingInterval:    10 * time.Second,
		AcceptOptions:   websocket.AcceptOptions{OriginPatterns: cfg.AllowedOrigins},
		GoingAway:       goingAway.ctx,
		Track:           goingAway.open,
		MutationTimeout: cfg.MutationTimeout,
	})
	// SSE before POST: both accept POST, and SSE claims only event streams.
	srv.AddTransport(sseTransport{keys: cfg.Resolver.Keys, goingAway: goingAway})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(httpTransport{})
	// Last: whatever no transport took gets a coded 405 or 415.
	srv.AddTransport(unsupported{})

	documents := pageDefaultsCache{Cache: lru.New[*ast.QueryDocument](1000), first: cfg.Pages.Default}
	srv.SetQueryCache(documents)
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.Use(introspectionOff{})
	}
	srv.SetDisableSuggestion(!cfg.Introspection)
	// One door for every transport's operations (fairness.go), which also
	// counts them (metrics.go): the one frame between a transport and the
	// resolvers.
	present := presentError(cfg.Logger)
	srv.AroundOperations(admit(operationDoor{admission: admission, keys: cfg.Resolver.Keys, subscriptions: subscriptions,
		metrics: cfg.Metrics, present: present, log: cfg.Logger}))
	srv.Use(cfg.Pages)
	srv.Use(cfg.Limits)
	srv.Use(&InputChecks{TokenLimit: cfg.TokenLimit, Documents: documents})
	if cfg.TracerProvider != nil {
		srv.Use(NewTracing(cfg.TracerProvider))
	}
	srv.SetParserTokenLimit(cfg.TokenLimit)
	srv.SetErrorPresenter(present)
	srv.SetRecoverFunc(recoverPanic(cfg.Logger))
	return srv
}

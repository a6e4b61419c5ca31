// Package app assembles sessiongraph: the database pool, the migrations, the
// ent client, the engine and the HTTP handler that serves them.
package app

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"sessiongraph/domains"

	"sessiongraph/ent"
	"sessiongraph/graph"
	"sessiongraph/internal/access"
	"sessiongraph/internal/config"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/dbhook"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/events"
	"sessiongraph/internal/mcpserver"
	"sessiongraph/internal/store"
)

// Config is everything the server can be told: the operator's settings
// (start from config.Defaults(), or config.Load) and what only code can give.
type Config struct {
	config.Settings
	// NoReaper leaves expiry to another replica or to the test.
	NoReaper bool
	Logger   *slog.Logger
	// WrapDriver, when set, wraps the ent driver; tests use it to record
	// the statements ent sends.
	WrapDriver func(dialect.Driver) dialect.Driver
	// RoundTripHook, when set, runs around every statement ent sends and
	// every exchange of a store's write; with RoundTrips, which hears of
	// every round trip the pool's connections make (a pgx tracer), tests
	// and the load generator count the round trips made for what the hook
	// marked in its context.
	RoundTripHook dbhook.Hook
	RoundTrips    dbhook.RoundTrips
	// TracerProvider, when set, traces requests, operations and statements
	// (server.go sets it when an OTLP endpoint is configured).
	TracerProvider trace.TracerProvider
	// EventPollInterval, when set, replaces how often the event hub reads
	// without a doorbell; tests set it long to prove a bell was heard.
	EventPollInterval time.Duration
}

// App is a running sessiongraph: open connections and a handler.
type App struct {
	DB     *sql.DB
	Client *ent.Client
	Engine *engine.Engine
	Hub    *events.Hub
	// Keys authenticates requests' API keys, cached while it hears of
	// every revocation through Hub.
	Keys    *access.Keys
	log     *slog.Logger
	handler http.Handler
	stopHub func()
	cfg     Config
	metrics *prometheus.Registry
	// admission admits every operation, whatever its door; doors are the
	// routes operations come in by.
	admission *access.Admission
	doors     map[string]http.Handler
	// keyClient checks API keys on a pool of its own.
	keyClient *ent.Client
	// holds is the pool of the store's horizon holds on Citus, else nil.
	holds *sql.DB
	// httpRequests counts requests by route and status.
	httpRequests httpRequests
	// draining, requests and goingAway are the shutdown's (drain.go).
	draining  atomic.Bool
	requests  inFlight
	goingAway *graph.GoingAway
	// outage knows whether the database is out of reach right now.
	outage *outage
}

// New migrates the database at cfg.DatabaseURL and assembles the server.
func New(ctx context.Context, cfg Config) (*App, error) {
	cfg.Logger = withRequestIDs(cfg.Logger)
	down := &outage{log: cfg.Logger}
	db, client, onPool, err := openDatabase(ctx, cfg, down)
	if err != nil {
		return nil, err
	}
	holds, hold, err := horizonHoldsOnCitus(ctx, cfg, db)
	if err != nil {
		client.Close()
		return nil, err
	}
	// Each part takes what it depends on when it is made: the hub reads
	// the events, the doorbell wakes it after each commit of the store,
	// the engine writes through the store and serves the hub's streams,
	// and the key cache hears of revocations from the hub.
	hub := events.NewHub(db, forLibPQ(cfg.DatabaseURL), cfg.EventPollInterval, cfg.Logger)
	bell := events.NewDoorbell(db, hub, cfg.Logger)
	st := store.New(client, db, append(append(onPool, hold...), store.RingOnCommit(bell.Ring), store.ConfinedBy(access.TenantScope))...)
	eng := engine.New(client, st, hub, engine.Config{
		DefaultTTL:           cfg.DefaultTTL,
		DefaultDomain:        cfg.DefaultDomain,
		DomainCacheTTL:       cfg.DomainCacheTTL,
		ReapInterval:         cfg.ReapInterval,
		Retention:            cfg.Retention,
		ReceiptHashOnly:      cfg.ReceiptHashOnly,
		RecordContexts:       recordedNodes(cfg.RecordContexts),
		ReceiptTextRetention: cfg.ReceiptTextRetention,
	})
	if err := syncDomains(access.System(ctx), eng, cfg.DomainFile); err != nil {
		client.Close()
		return nil, err
	}
	_, keyClient, err := openKeyClient(cfg, down)
	if err != nil {
		client.Close()
		return nil, err
	}
	a := &App{DB: db, Client: client, Engine: eng, Hub: hub, Keys: access.NewKeys(keyClient, st, hub.Subscribe, cfg.Logger), log: cfg.Logger, cfg: cfg, keyClient: keyClient, goingAway: graph.NewGoingAway(), outage: down, holds: holds,
		admission: &access.Admission{
			Fairness:     access.NewFairness(cfg.Fairness),
			Slots:        newSlots(cfg.Fairness, cfg.TenantLinger),
			Shares:       access.NewPoolShares(db.Stats().MaxOpenConnections, cfg.Fairness.KeyPoolShare, cfg.Fairness.TenantPoolShare),
			QueryTimeout: cfg.QueryTimeout, MutationTimeout: cfg.MutationTimeout,
		}}
	a.metrics = a.newRegistry()
	a.startHub(cfg, bell)
	gql := graph.NewServer(graph.ServerConfig{
		Resolver:       &graph.Resolver{Client: client, Engine: eng, Keys: a.Keys, CompiledQuery: st.Query},
		Logger:         cfg.Logger,
		Introspection:  cfg.Introspection,
		CompiledReads:  cfg.CompiledReads,
		AllowedOrigins: cfg.AllowedOrigins,
		Pages:          graph.PageLimits{Default: cfg.PageDefault, Max: cfg.PageMax},
		Limits:         graph.Limits{Limits: cfg.Limits, PageDefault: cfg.PageDefault},
		Metrics:        graph.NewMetrics(a.metrics),
		TokenLimit:     cfg.TokenLimit,
		Subscriptions:  cfg.Subscriptions,
		Admission:      a.admission,
		// Over a WebSocket as over HTTP, a mutation that arrived whole
		// commits whatever its client does, within its class's deadline.
		MutationTimeout: cfg.MutationTimeout,
		TracerProvider:  cfg.TracerProvider,
		GoingAway:       a.goingAway,
	})
	mcp := mcpserver.Handler(mcpserver.Config{Engine: eng, Logger: cfg.Logger,
		Admission: a.admission, MaxBodyBytes: cfg.MaxBodyBytes})
	a.handler = a.routes(gql, mcp)
	return a, nil
}

// ClientSubscriptions counts the clients' subscriptions on this replica:
// the hub's subscribers less the API key cache's own revocation feed.
func (a *App) ClientSubscriptions() int {
	n := a.Hub.Subscribers()
	if a.Keys.Caching() {
		n--
	}
	return max(n, 0)
}

// Handler serves every route of the server.
func (a *App) Handler() http.Handler { return a.handler }

// Close stops the event hub and releases the database connections.
func (a *App) Close() error {
	a.stopHub()
	a.keyClient.Close()
	if a.holds != nil {
		a.holds.Close()
	}
	return a.Client.Close()
}

// startHub runs this replica's event hub, its doorbell, the API key
// cache's subscription to revocations and the expiry reaper until Close.
func (a *App) startHub(cfg Config, bell *events.Doorbell) {
	// The hub and the reaper are the server's own work, across tenants.
	ctx, cancel := context.WithCancel(access.System(context.Background()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Hub.Run(ctx); err != nil {
			a.log.Error("event hub stopped", "error", err)
		}
	}()
	rang := make(chan struct{})
	go func() {
		defer close(rang)
		bell.Run(ctx)
	}()
	keysDone := make(chan struct{})
	go func() {
		defer close(keysDone)
		a.Keys.Run(ctx)
	}()
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		if !cfg.NoReaper {
			a.Engine.Sessions.RunReaper(ctx, a.log)
		}
	}()
	a.stopHub = func() {
		cancel()
		<-done
		<-rang
		<-keysDone
		<-reaped
	}
}

// withRequestIDs is log, or the default logger, adding each request's id
// to the lines logged with its context.
func withRequestIDs(log *slog.Logger) *slog.Logger {
	if log == nil {
		log = slog.Default()
	}
	return slog.New(requestIDs{log.Handler()})
}

// syncDomains writes the embedded kitchen domain, and the domain file if one
// is given, to the database.
func syncDomains(ctx context.Context, eng *engine.Engine, file string) error {
	kitchen, err := domains.Kitchen()
	if err != nil {
		return err
	}
	if err := eng.Domains.SyncDomain(ctx, kitchen); err != nil {
		return fmt.Errorf("loading the kitchen domain: %w", err)
	}
	if file == "" {
		return nil
	}
	d, err := domains.Load(file)
	if err != nil {
		return err
	}
	return eng.Domains.SyncDomain(ctx, d)
}

// recordedNodes are the nodes -record-contexts names; config has checked
// each is one.
func recordedNodes(names []string) []contextbuild.Node {
	nodes := make([]contextbuild.Node, len(names))
	for i, n := range names {
		nodes[i] = contextbuild.Node(n)
	}
	return nodes
}

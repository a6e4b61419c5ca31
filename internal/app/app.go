// Package app assembles sessiongraph: the database pool, the migrations, the
// ent client, the engine and the HTTP handler that serves them.
package app

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver for the pool

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"sessiongraph/domains"

	"sessiongraph/ent"
	"sessiongraph/graph"
	"sessiongraph/internal/access"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
	"sessiongraph/internal/tracing"
	"sessiongraph/migrations"
)

// Config is everything the server can be told; server.go fills it from flags
// and environment variables.
type Config struct {
	DatabaseURL   string
	DefaultTTL    time.Duration
	DefaultDomain string
	// DomainFile is a YAML domain file loaded at start, besides the
	// embedded kitchen domain.
	DomainFile     string
	AllowedOrigins []string
	Introspection  bool
	MaxOpenConns   int
	DomainCacheTTL time.Duration
	ReapInterval   time.Duration
	Retention      time.Duration
	// NoReaper leaves expiry to another replica or to the test.
	NoReaper    bool
	PageDefault int
	PageMax     int
	Logger      *slog.Logger
	// WrapDriver, when set, wraps the ent driver; tests use it to count the
	// statements an operation issues.
	WrapDriver func(dialect.Driver) dialect.Driver
	// Request limits; zero values take the defaults in withDefaults.
	MaxBodyBytes   int64
	RequestTimeout time.Duration
	TokenLimit     int
	Limits         graph.Limits
	// Subscriptions caps live subscriptions per WebSocket, per API key and
	// per replica; zero values take graph's defaults.
	Subscriptions graph.SubscriptionLimits
	// TracerProvider, when set, traces requests, operations and statements
	// (server.go sets it when an OTLP endpoint is configured).
	TracerProvider trace.TracerProvider
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
}

// New migrates the database at cfg.DatabaseURL and assembles the server.
func New(ctx context.Context, cfg Config) (*App, error) {
	cfg = withDefaults(cfg)
	if err := migrations.Apply(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	// pgx, not lib/pq, for the pool: lib/pq prepares every statement with
	// arguments in a round trip of its own before running it, pgx caches
	// the prepared statements per connection, so a statement is one round
	// trip. (The event hub keeps lib/pq's Listener.)
	db, err := sql.Open("pgx", cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(cfg.MaxOpenConns)
	db.SetMaxIdleConns(cfg.MaxOpenConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database unreachable: %w", err)
	}
	var drv dialect.Driver = entsql.OpenDB(dialect.Postgres, db)
	if cfg.WrapDriver != nil {
		drv = cfg.WrapDriver(drv)
	}
	if cfg.TracerProvider != nil {
		drv = tracing.Driver(drv, cfg.TracerProvider)
	}
	client := ent.NewClient(ent.Driver(drv))
	access.Confine(client)
	st := store.New(client, nil)
	eng := engine.New(client, st, engine.Config{
		DefaultTTL:     cfg.DefaultTTL,
		DefaultDomain:  cfg.DefaultDomain,
		DomainCacheTTL: cfg.DomainCacheTTL,
		ReapInterval:   cfg.ReapInterval,
		Retention:      cfg.Retention,
	})
	if err := syncDomains(access.System(ctx), eng, cfg.DomainFile); err != nil {
		client.Close()
		return nil, err
	}
	a := &App{DB: db, Client: client, Engine: eng, log: cfg.Logger, cfg: cfg}
	a.metrics = a.newRegistry()
	a.startHub(cfg, st)
	gql := graph.NewServer(graph.ServerConfig{
		Resolver:       &graph.Resolver{Client: client, Engine: eng, Keys: a.Keys},
		Logger:         cfg.Logger,
		Introspection:  cfg.Introspection,
		AllowedOrigins: cfg.AllowedOrigins,
		Pages:          graph.PageLimits{Default: cfg.PageDefault, Max: cfg.PageMax},
		Limits:         cfg.Limits,
		Metrics:        graph.NewMetrics(a.metrics),
		TokenLimit:     cfg.TokenLimit,
		Subscriptions:  cfg.Subscriptions,
		TracerProvider: cfg.TracerProvider,
	})
	a.handler = a.routes(gql)
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
	return a.Client.Close()
}

// startHub runs this replica's event hub, the API key cache's subscription
// to revocations and the expiry reaper until Close.
func (a *App) startHub(cfg Config, st *store.Store) {
	a.Hub = events.NewHub(a.DB, cfg.DatabaseURL, cfg.Logger)
	a.Engine.SetHub(a.Hub)
	a.Keys = access.NewKeys(a.Client, st, cfg.Logger)
	// The hub and the reaper are the server's own work, across tenants.
	ctx, cancel := context.WithCancel(access.System(context.Background()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Hub.Run(ctx); err != nil {
			a.log.Error("event hub stopped", "error", err)
		}
	}()
	keysDone := make(chan struct{})
	go func() {
		defer close(keysDone)
		a.Keys.Run(ctx, a.Hub.Subscribe)
	}()
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		if !cfg.NoReaper {
			a.Engine.RunReaper(ctx, a.log)
		}
	}()
	a.stopHub = func() {
		cancel()
		<-done
		<-keysDone
		<-reaped
	}
}

func withDefaults(cfg Config) Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = slog.New(requestIDs{cfg.Logger.Handler()})
	if cfg.MaxOpenConns <= 0 {
		cfg.MaxOpenConns = 20
	}
	if cfg.PageDefault <= 0 {
		cfg.PageDefault = 20
	}
	if cfg.PageMax <= 0 {
		cfg.PageMax = 100
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 2 << 20
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.TokenLimit <= 0 {
		cfg.TokenLimit = 15000
	}
	l := &cfg.Limits
	l.MaxDepth = orDefault(l.MaxDepth, 15)
	l.MaxAliases = orDefault(l.MaxAliases, 30)
	l.MaxRootFields = orDefault(l.MaxRootFields, 20)
	l.MaxComplexity = orDefault(l.MaxComplexity, 50000)
	l.PageDefault = cfg.PageDefault
	cfg.Subscriptions = cfg.Subscriptions.OrDefaults()
	return cfg
}

// syncDomains writes the embedded kitchen domain, and the domain file if one
// is given, to the database.
func syncDomains(ctx context.Context, eng *engine.Engine, file string) error {
	kitchen, err := domains.Kitchen()
	if err != nil {
		return err
	}
	if err := eng.SyncDomain(ctx, kitchen); err != nil {
		return fmt.Errorf("loading the kitchen domain: %w", err)
	}
	if file == "" {
		return nil
	}
	d, err := domains.Load(file)
	if err != nil {
		return err
	}
	return eng.SyncDomain(ctx, d)
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Command sessiongraph serves the working memory of LLM-agent conversations:
// a GraphQL API over PostgreSQL, with subscriptions and an admin dashboard.
//
// Every setting is a flag with an environment variable of the same meaning;
// the flag wins. `sessiongraph -h` lists them; README.md has the table.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"sessiongraph/graph"
	"sessiongraph/internal/app"
	"sessiongraph/internal/devdb"
	"sessiongraph/internal/tracing"
)

type options struct {
	listen            string
	databaseURL       string
	dataDir           string
	logLevel          string
	logFormat         string
	allowedOrigins    string
	introspection     bool
	bootstrapAdminKey bool
	sessionTTL        time.Duration
	defaultDomain     string
	domainFile        string
	shutdownTimeout   time.Duration
	reapInterval      time.Duration
	retention         time.Duration
	maxBodyBytes      int64
	requestTimeout    time.Duration
	tokenLimit        int
	maxDepth          int
	maxAliases        int
	maxRootFields     int
	maxComplexity     int
	subscriptions     graph.SubscriptionLimits
}

func main() {
	opts := parseOptions(os.Args[1:])
	log, err := newLogger(opts.logLevel, opts.logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sessiongraph:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, log, os.Stdout); err != nil {
		log.Error("sessiongraph stopped", "error", err)
		os.Exit(1)
	}
}

func parseOptions(args []string) options {
	var o options
	fs := flag.NewFlagSet("sessiongraph", flag.ExitOnError)
	fs.StringVar(&o.listen, "listen", env("LISTEN_ADDR", "127.0.0.1:8080"), "address to serve HTTP on (LISTEN_ADDR)")
	fs.StringVar(&o.databaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty uses the embedded default (DATABASE_URL)")
	fs.StringVar(&o.dataDir, "data-dir", env("DATA_DIR", ".data/postgres"), "where the embedded default keeps its private cluster (DATA_DIR)")
	fs.StringVar(&o.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (LOG_LEVEL)")
	fs.StringVar(&o.logFormat, "log-format", env("LOG_FORMAT", "json"), "json or text (LOG_FORMAT)")
	fs.StringVar(&o.allowedOrigins, "allowed-origins", env("ALLOWED_ORIGINS", ""), "comma-separated host patterns of other origins allowed to open WebSockets (ALLOWED_ORIGINS)")
	fs.BoolVar(&o.introspection, "introspection", envBool("INTROSPECTION", false), "allow schema introspection and field suggestions (INTROSPECTION)")
	fs.DurationVar(&o.sessionTTL, "session-ttl", envDuration("SESSION_TTL", 24*time.Hour), "default inactivity before a session expires (SESSION_TTL)")
	fs.StringVar(&o.defaultDomain, "default-domain", env("DEFAULT_DOMAIN", "kitchen"), "domain of sessions opened without one (DEFAULT_DOMAIN)")
	fs.StringVar(&o.domainFile, "domain-file", env("DOMAIN_FILE", ""), "YAML file of a domain's entity types, loaded at start besides the embedded kitchen domain (DOMAIN_FILE)")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", envDuration("SHUTDOWN_TIMEOUT", 15*time.Second), "how long in-flight requests may take to finish on shutdown (SHUTDOWN_TIMEOUT)")
	fs.DurationVar(&o.reapInterval, "reap-interval", envDuration("REAP_INTERVAL", time.Minute), "how often the expiry reaper runs, on one replica at a time (REAP_INTERVAL)")
	fs.DurationVar(&o.retention, "retention", envDuration("RETENTION", 7*24*time.Hour), "how long expired sessions stay readable before they are purged (RETENTION)")
	fs.Int64Var(&o.maxBodyBytes, "max-body-bytes", int64(envInt("MAX_BODY_BYTES", 2<<20)), "largest request body accepted; larger gets 413 (MAX_BODY_BYTES)")
	fs.DurationVar(&o.requestTimeout, "request-timeout", envDuration("REQUEST_TIMEOUT", 30*time.Second), "a query or mutation is cancelled, with its database work, after this (REQUEST_TIMEOUT)")
	fs.IntVar(&o.tokenLimit, "token-limit", envInt("TOKEN_LIMIT", 15000), "most tokens the parser reads from one query (TOKEN_LIMIT)")
	fs.IntVar(&o.maxDepth, "max-depth", envInt("MAX_DEPTH", 15), "deepest selection nesting allowed (MAX_DEPTH)")
	fs.IntVar(&o.maxAliases, "max-aliases", envInt("MAX_ALIASES", 30), "most aliases in one operation (MAX_ALIASES)")
	fs.IntVar(&o.maxRootFields, "max-root-fields", envInt("MAX_ROOT_FIELDS", 20), "most root fields in one operation (MAX_ROOT_FIELDS)")
	fs.IntVar(&o.maxComplexity, "max-complexity", envInt("MAX_COMPLEXITY", 50000), "highest operation cost: a field costs 1, times the page size of each connection above it (MAX_COMPLEXITY)")
	fs.IntVar(&o.subscriptions.PerSocket, graph.SettingSubscriptionsPerSocket, envInt("MAX_SUBSCRIPTIONS_PER_SOCKET", graph.DefaultSubscriptionsPerSocket), "most live subscriptions on one WebSocket (MAX_SUBSCRIPTIONS_PER_SOCKET)")
	fs.IntVar(&o.subscriptions.PerKey, graph.SettingSubscriptionsPerKey, envInt("MAX_SUBSCRIPTIONS_PER_KEY", graph.DefaultSubscriptionsPerKey), "most live subscriptions of one API key on this replica (MAX_SUBSCRIPTIONS_PER_KEY)")
	fs.IntVar(&o.subscriptions.PerReplica, graph.SettingSubscriptionsPerReplica, envInt("MAX_SUBSCRIPTIONS", graph.DefaultSubscriptionsPerReplica), "most live subscriptions on this replica (MAX_SUBSCRIPTIONS)")
	fs.BoolVar(&o.bootstrapAdminKey, "bootstrap-admin-key", envBool("BOOTSTRAP_ADMIN_KEY", false), "when no admin API key exists, create one and print it once (BOOTSTRAP_ADMIN_KEY)")
	_ = fs.Parse(args)
	return o
}

// run serves until ctx ends, then drains in-flight requests. It prints the
// URL to out once it listens.
func run(ctx context.Context, opts options, log *slog.Logger, out io.Writer) error {
	dsn := opts.databaseURL
	if dsn == "" {
		cluster, err := devdb.Ensure(ctx, devdb.Options{DataDir: opts.dataDir, Database: "sessiongraph", Logger: log})
		if err != nil {
			return err
		}
		defer func() {
			if err := cluster.Stop(context.Background()); err != nil {
				log.Error("stopping private PostgreSQL", "error", err)
			}
		}()
		dsn = cluster.DSN
	}

	var tp trace.TracerProvider
	if tracing.Configured() {
		exporter, shutdown, err := tracing.Exporter(ctx)
		if err != nil {
			return err
		}
		defer func() {
			flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(flush); err != nil {
				log.Error("flushing traces", "error", err)
			}
		}()
		tp = exporter
		log.Info("exporting traces over OTLP", "endpoint", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")+os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	}

	a, err := app.New(ctx, app.Config{
		DatabaseURL:    dsn,
		DefaultTTL:     opts.sessionTTL,
		DefaultDomain:  opts.defaultDomain,
		DomainFile:     opts.domainFile,
		ReapInterval:   opts.reapInterval,
		Retention:      opts.retention,
		MaxBodyBytes:   opts.maxBodyBytes,
		RequestTimeout: opts.requestTimeout,
		TokenLimit:     opts.tokenLimit,
		Limits: graph.Limits{MaxDepth: opts.maxDepth, MaxAliases: opts.maxAliases,
			MaxRootFields: opts.maxRootFields, MaxComplexity: opts.maxComplexity},
		Subscriptions:  opts.subscriptions,
		AllowedOrigins: splitList(opts.allowedOrigins),
		Introspection:  opts.introspection,
		Logger:         log,
		TracerProvider: tp,
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if opts.bootstrapAdminKey {
		key, err := a.EnsureAdminKey(ctx)
		if err != nil {
			return fmt.Errorf("creating the first admin key: %w", err)
		}
		if key != "" {
			fmt.Fprintf(out, "first admin API key, shown this once (send it as 'Authorization: Bearer <key>'): %s\n", key)
		}
	}

	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(out, "sessiongraph is serving at %s/ (GraphQL %s/graphql, GraphiQL %s/graphiql)\n", url, url, url)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", "timeout", opts.shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), opts.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	ho := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, ho)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, ho)), nil
	}
	return nil, fmt.Errorf("log format %q: use json or text", format)
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

func envBool(key string, def bool) bool {
	if b, err := strconv.ParseBool(os.Getenv(key)); err == nil {
		return b
	}
	return def
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

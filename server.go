// Command sessiongraph serves the working memory of LLM-agent conversations:
// a GraphQL API over PostgreSQL, with subscriptions and an admin dashboard.
//
// Every setting is a flag with an environment variable of the same meaning;
// the flag wins (internal/config). `sessiongraph -h` lists them;
// docs/configuration.md has the table. `sessiongraph keys create|list|revoke` manages API keys.
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
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"sessiongraph/graph"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/devdb"
	"sessiongraph/internal/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := sessiongraph(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errNoDatabase stops a server that was given no database: the production
// binary never guesses one.
var errNoDatabase = errors.New("no database: set DATABASE_URL (or -database-url) to a PostgreSQL URL, " +
	"or pass -dev to use this checkout's own development database under -data-dir (make run does)")

// commands are the subcommands; without one, the binary serves.
var commands = map[string]func(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int{
	"keys":           keysCommand,
	"migrate":        migrateCommand,
	"delete-user":    deleteUserCommand,
	"export-session": exportSessionCommand,
	"import-session": importSessionCommand,
	"healthcheck":    healthcheckCommand,
	"mcp":            mcpCommand,
}

// sessiongraph runs the command line args and returns the exit code: 2 for
// a usage or configuration error, 1 when the server or command failed.
func sessiongraph(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if command, ok := commands[args[0]]; ok {
			return command(ctx, args[1:], env, stdout, stderr)
		}
	}
	s, rest, err := config.Load("sessiongraph", args, env, stderr, nil)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, "\nsessiongraph keys create|list|revoke manages API keys: sessiongraph keys -h")
		fmt.Fprintln(stderr, "sessiongraph migrate [status], delete-user, export-session, import-session, healthcheck: operations (docs/operations-data.md, docs/image.md)")
		fmt.Fprintln(stderr, "sessiongraph mcp --stdio: MCP on stdin and stdout, for a host that speaks only stdio (docs/mcp.md)")
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "sessiongraph:", err)
		return 2
	case len(rest) > 0:
		fmt.Fprintf(stderr, "sessiongraph: unknown command %q: the commands are keys, migrate, delete-user, export-session, import-session, healthcheck, mcp, or none to serve\n", rest[0])
		return 2
	case s.DatabaseURL == "" && !s.Dev:
		fmt.Fprintln(stderr, "sessiongraph:", errNoDatabase)
		return 2
	}
	log, err := newLogger(s.LogLevel, s.LogFormat, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph:", err)
		return 2
	}
	if err := run(ctx, s, log, stdout, stderr); err != nil {
		log.Error("sessiongraph stopped", "error", err)
		return 1
	}
	return 0
}

// withDatabase returns s with DatabaseURL naming its database (with -dev and
// no URL, this checkout's development cluster, started if need be) and what
// to call when done with it.
func withDatabase(ctx context.Context, s config.Settings, log *slog.Logger) (config.Settings, func(), error) {
	if s.DatabaseURL != "" {
		return s, func() {}, nil
	}
	if !s.Dev {
		return s, nil, errNoDatabase
	}
	cluster, err := devdb.Ensure(ctx, devdb.Options{DataDir: s.DataDir, Database: "sessiongraph", Logger: log})
	if err != nil {
		return s, nil, err
	}
	s.DatabaseURL = cluster.DSN
	return s, func() {
		if err := cluster.Stop(context.Background()); err != nil {
			log.Error("stopping private PostgreSQL", "error", err)
		}
	}, nil
}

// commandDatabase is withDatabase for a command line tool, named command in
// what it prints: it logs only what went wrong, as text, to stderr, and
// returns the app's config on the database and what to call when done. On
// a failure it prints why and reports false (exit code 2).
func commandDatabase(ctx context.Context, command string, s config.Settings, stderr io.Writer) (app.Config, func(), bool) {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, release, err := withDatabase(ctx, s, log)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", command, err)
		return app.Config{}, nil, false
	}
	return app.Config{Settings: s, Logger: log}, release, true
}

// run serves until ctx ends, then drains in-flight requests. It prints the
// URL to out once it listens, and a bootstrapped admin key to terminal.
func run(ctx context.Context, s config.Settings, log *slog.Logger, out, terminal io.Writer) error {
	devDatabase := s.DatabaseURL == ""
	s, release, err := withDatabase(ctx, s, log)
	if err != nil {
		return err
	}
	defer release()

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

	a, err := app.New(ctx, app.Config{Settings: s, Logger: log, TracerProvider: tp})
	if err != nil {
		return err
	}
	defer a.Close()
	if s.BootstrapAdminKey {
		key, err := a.EnsureAdminKey(ctx)
		if err != nil {
			return fmt.Errorf("creating the first admin key: %w", err)
		}
		if key != "" {
			// A plain line on stderr, for the operator at the terminal: never
			// a log record, which log pipelines keep and forward.
			fmt.Fprintf(terminal, "first admin API key, shown this once (send it as 'Authorization: Bearer <key>'): %s\n", key)
		} else {
			fmt.Fprintf(out, "an admin API key exists already (a key is shown only when it is created); lost it? make another: %s\n",
				keysCreateHint(devDatabase))
		}
	}

	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: s.ReadTimeout, // the body's own deadline is set per request (internal/app)
		// Not ctx itself: a request must outlive the signal that starts the
		// drain, or every request in flight would answer CANCELLED.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnContext: graph.ConnContext,
	}
	url := "http://" + ln.Addr().String()
	if s.MetricsListen != "" {
		addr, stop, err := serveMetrics(s.MetricsListen, a.MetricsHandler())
		if err != nil {
			ln.Close()
			return fmt.Errorf("metrics listener: %w", err)
		}
		defer stop()
		fmt.Fprintf(out, "metrics at http://%s/metrics\n", addr)
	}
	fmt.Fprintf(out, "sessiongraph is serving at %s/ (GraphQL %s/graphql, GraphiQL %s/graphiql)\n", url, url, url)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return drain(srv, a, s, log, errc)
}

// drain stops a serving replica without losing work (docs/operations-drain.md):
// /readyz answers 503 for the drain delay while everything is still served;
// then the listener closes, the requests in flight finish, and every
// subscription ends with "resume elsewhere from your cursor" (WebSocket
// close 1012, an SSE event); all of it within the shutdown timeout, after
// which what is left is cut.
func drain(srv *http.Server, a *app.App, s config.Settings, log *slog.Logger, errc <-chan error) error {
	log.Info("shutting down: /readyz answers 503", "drain_delay", s.DrainDelay, "timeout", s.ShutdownTimeout)
	a.Drain()
	if s.DrainDelay > 0 {
		delay := time.NewTimer(s.DrainDelay)
		select {
		case <-delay.C:
		case err := <-errc:
			delay.Stop()
			return err
		}
	}
	log.Info("shutting down: no new connections; draining in-flight requests, then subscriptions", "timeout", s.ShutdownTimeout)
	deadline, cancel := context.WithTimeout(context.Background(), s.ShutdownTimeout)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- srv.Shutdown(deadline) }()
	if err := a.GoAway(deadline); err != nil {
		log.Warn("shutting down: the deadline passed before every request and stream ended", "error", err)
	}
	err := <-closed
	if errors.Is(err, context.DeadlineExceeded) {
		// What is still running is cut: its clients see the connection drop.
		_ = srv.Close()
		return nil
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("shut down: every request and stream ended")
	return nil
}

func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	ho := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("log format %q: use json or text", format)
}

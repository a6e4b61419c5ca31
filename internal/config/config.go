// Package config is the one place where sessiongraph's settings, their
// defaults, flags and environment variables are defined. The server's flags,
// the app and the engine all read their defaults from here.
//
// Adding a setting: a field in Settings, and one line in (*Settings).bind
// that names its flag, its environment variable, its default and what it
// means. Defaults, Load, `sessiongraph -h` and the strict parsing of the
// environment follow from that line; docs/configuration.md's table is
// the only other place to touch.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Settings is everything an operator can set. Its zero value means nothing:
// start from Defaults (or Load).
type Settings struct {
	Listen string
	// DatabaseURL is the PostgreSQL the server uses; empty refuses to start
	// unless Dev is set.
	DatabaseURL string
	// Dev uses the development database of this checkout (internal/devdb)
	// when DatabaseURL is empty.
	Dev bool
	// DataDir is where the development database keeps its private cluster.
	DataDir   string
	LogLevel  string
	LogFormat string
	// SlowRequest is the duration from which a request is logged at warn;
	// faster successful requests are logged at debug only.
	SlowRequest time.Duration
	// AllowedOrigins are host patterns of other origins whose pages may open
	// WebSockets; the server's own origin is always allowed.
	AllowedOrigins  []string
	Introspection   bool
	CompiledReads   bool
	ReceiptHashOnly bool
	// RecordContexts are the nodes whose every context build a runtime's
	// (CLIENT) key reads is also recorded as a receipt, as if it had called
	// recordContext.
	RecordContexts []string
	// ReceiptTextRetention is how long a receipt keeps its text before the
	// reaper clears it, leaving its hash; 0 keeps it as long as its session.
	ReceiptTextRetention time.Duration
	BootstrapAdminKey    bool
	// MetricsListen, when set, serves /metrics there to anyone; on Listen
	// it needs an ADMIN key.
	MetricsListen string
	// DefaultTTL is the inactivity after which a session expires when its
	// opener gives no TTL.
	DefaultTTL    time.Duration
	DefaultDomain string
	// DomainFile is a YAML domain file loaded at start, besides the embedded
	// kitchen domain.
	DomainFile      string
	ShutdownTimeout time.Duration
	// DrainDelay is how long a replica that was told to stop keeps serving
	// with /readyz at 503 before it closes its listener, so that a load
	// balancer has stopped sending it new connections.
	DrainDelay   time.Duration
	ReapInterval time.Duration
	// Retention is how long an expired session stays readable before the
	// reaper purges it.
	Retention    time.Duration
	MaxBodyBytes int64
	// ReadTimeout bounds how long a client may take to send a request's
	// headers, and again its body: a slow sender holds a connection no
	// longer, with or without a key.
	ReadTimeout    time.Duration
	RequestTimeout time.Duration
	// QueryTimeout and MutationTimeout bound one operation of their class,
	// its database statements with it, within RequestTimeout: a search
	// gives up sooner than a write (docs/fairness.md).
	QueryTimeout    time.Duration
	MutationTimeout time.Duration
	TokenLimit      int
	Limits          Limits
	// Subscriptions caps the live subscriptions of one WebSocket, of one API
	// key on one replica, and of the replica.
	Subscriptions SubscriptionLimits
	// Fairness bounds each key's and tenant's requests (docs/fairness.md).
	Fairness Fairness
	// MaxOpenConns bounds the database pool; 0 sizes it from the machine
	// and the database (internal/app's poolSize).
	MaxOpenConns int

	// Not flags: fixed defaults that tests may change.
	// TenantLinger is how long a tenant counts as working after its last
	// operation, when a key's operation slots are divided among the
	// tenants working (access.Slots): a conversation's requests come in
	// bursts a second or less apart.
	TenantLinger time.Duration
	// DomainCacheTTL bounds how long a replica may use entity types another
	// replica has since changed.
	DomainCacheTTL time.Duration
	// PageDefault is the page a connection without first or last returns;
	// PageMax the largest page a client may ask for.
	PageDefault int
	PageMax     int
}

// Limits bounds what one operation may ask for.
type Limits struct {
	MaxDepth      int
	MaxAliases    int
	MaxRootFields int
	// MaxComplexity bounds the operation's cost: every field costs 1, and a
	// connection's selection counts once per node it may return.
	MaxComplexity int
}

// Fairness bounds what one API key, and the keys of one tenant together,
// may ask of a replica: requests a second (a token bucket refilled at Rate
// a second, holding Burst) and requests in flight. Over either, a request
// is answered 429 RATE_LIMITED with Retry-After. The defaults leave an
// agent runtime's key far more than a conversation needs (a turn is a few
// dozen requests) while one key cannot take a replica from the others.
//
// KeyPoolShare and TenantPoolShare are the percent of the database pool
// one key's, and one tenant's, queries and mutations may hold at once; the
// rest wait their turn (access.PoolShares).
//
// Operations is how many queries and mutations the replica runs at once
// (0: sized from its cores), KeyOperations how many of them one key's (0:
// sized from Operations); the others wait, and free places go to the
// waiting keys in turn (access.Slots).
type Fairness struct {
	KeyRate, KeyBurst, KeyInFlight          int
	TenantRate, TenantBurst, TenantInFlight int
	KeyPoolShare, TenantPoolShare           int
	Operations, KeyOperations               int
}

// SubscriptionLimits caps live subscriptions, so that no client can hold a
// replica's memory hostage. A subscription costs 16 KB on a socket that
// carries many and up to 40 KB alone (BENCHMARKS.md), so the defaults bound
// a socket at ~1.6 MB, a key at 16-40 MB and a replica at 160-400 MB, far
// above what a dashboard tab (a handful) or an agent runtime (one per
// session it follows) needs.
type SubscriptionLimits struct {
	PerSocket  int
	PerKey     int
	PerReplica int
}

// The flags of SubscriptionLimits, named in the errors that refuse a
// subscription so that an operator knows what to raise.
const (
	FlagSubscriptionsPerSocket  = "max-subscriptions-per-socket"
	FlagSubscriptionsPerKey     = "max-subscriptions-per-key"
	FlagSubscriptionsPerReplica = "max-subscriptions"
)

// bind names every setting's flag, environment variable and default.
func (s *Settings) bind(b *binder) {
	b.string(&s.Listen, "listen", "LISTEN_ADDR", "127.0.0.1:8080", "address to serve HTTP on")
	b.string(&s.MetricsListen, "metrics-listen", "METRICS_LISTEN", "", "address to serve /metrics on without a key (keep it private); on -listen, /metrics needs an ADMIN key")
	b.string(&s.DatabaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL URL; required unless -dev")
	b.bool(&s.Dev, "dev", "DEV", false, "without a database URL, use this checkout's own development database under -data-dir (make run sets it)")
	b.string(&s.DataDir, "data-dir", "DATA_DIR", ".data/postgres", "where -dev keeps its private PostgreSQL cluster")
	b.oneOf(&s.LogLevel, "log-level", "LOG_LEVEL", "info", "what to log", "debug", "info", "warn", "error")
	b.oneOf(&s.LogFormat, "log-format", "LOG_FORMAT", "json", "how to write log lines", "json", "text")
	b.duration(&s.SlowRequest, "slow-request", "SLOW_REQUEST", time.Second, "a request slower than this is logged at warn; other successful requests only at debug")
	b.list(&s.AllowedOrigins, "allowed-origins", "ALLOWED_ORIGINS", "comma-separated host patterns of other origins allowed to call the API from a browser (CORS) and to open WebSockets")
	b.bool(&s.Introspection, "introspection", "INTROSPECTION", false, "allow schema introspection and field suggestions")
	b.bool(&s.CompiledReads, "compiled-reads", "COMPILED_READS", true, "answer session pages of plain fields with one statement that writes their JSON")
	b.bool(&s.ReceiptHashOnly, "receipt-hash-only", "RECEIPT_HASH_ONLY", false, "keep only the SHA-256 of a recorded context build's text, not the text")
	b.listOf(&s.RecordContexts, "record-contexts", "RECORD_CONTEXTS", "comma-separated nodes whose every context build read with a CLIENT key is also recorded as a receipt", "UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES")
	b.durationOrZero(&s.ReceiptTextRetention, "receipt-text-retention", "RECEIPT_TEXT_RETENTION", "how long a context receipt keeps its text before the reaper clears it, keeping its hash; 0 keeps it as long as the session")
	b.bool(&s.BootstrapAdminKey, "bootstrap-admin-key", "BOOTSTRAP_ADMIN_KEY", false, "when no admin API key exists, create one and print it once")
	b.duration(&s.DefaultTTL, "session-ttl", "SESSION_TTL", 24*time.Hour, "inactivity after which a session expires, unless it was opened with its own TTL")
	b.string(&s.DefaultDomain, "default-domain", "DEFAULT_DOMAIN", "kitchen", "domain of sessions opened without one")
	b.string(&s.DomainFile, "domain-file", "DOMAIN_FILE", "", "YAML file of a domain's entity types, loaded at start besides the embedded kitchen domain")
	b.duration(&s.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", 15*time.Second, "how long in-flight requests may take to finish on shutdown")
	b.durationOrZero(&s.DrainDelay, "drain-delay", "DRAIN_DELAY", "on SIGTERM, how long /readyz answers 503 while the server still accepts requests, before it stops listening (set it to your load balancer's health check interval times its failure threshold)")
	b.duration(&s.ReapInterval, "reap-interval", "REAP_INTERVAL", time.Minute, "how often the expiry reaper runs, on one replica at a time")
	b.duration(&s.Retention, "retention", "RETENTION", 7*24*time.Hour, "how long expired sessions stay readable before they are purged")
	b.int64(&s.MaxBodyBytes, "max-body-bytes", "MAX_BODY_BYTES", 2<<20, "largest request body accepted; larger gets 413")
	b.duration(&s.ReadTimeout, "read-timeout", "READ_TIMEOUT", 10*time.Second, "how long a client may take to send a request's headers, and again its body; a slower one is cut off")
	b.duration(&s.RequestTimeout, "request-timeout", "REQUEST_TIMEOUT", 30*time.Second, "a query or mutation is cancelled, with its database work, after this")
	b.duration(&s.QueryTimeout, "query-timeout", "QUERY_TIMEOUT", 10*time.Second, "a query, with its database statements, is cancelled (TIMEOUT) after this")
	b.duration(&s.MutationTimeout, "mutation-timeout", "MUTATION_TIMEOUT", 20*time.Second, "a mutation, with its database statements, is cancelled (TIMEOUT) after this")
	b.int(&s.TokenLimit, "token-limit", "TOKEN_LIMIT", 15000, "most tokens the parser reads from one query")
	b.int(&s.Limits.MaxDepth, "max-depth", "MAX_DEPTH", 15, "deepest selection nesting allowed")
	b.int(&s.Limits.MaxAliases, "max-aliases", "MAX_ALIASES", 30, "most aliases in one operation")
	b.int(&s.Limits.MaxRootFields, "max-root-fields", "MAX_ROOT_FIELDS", 20, "most root fields in one operation")
	b.int(&s.Limits.MaxComplexity, "max-complexity", "MAX_COMPLEXITY", 50000, "highest operation cost: a field costs 1, times the page size of each connection above it")

	b.int(&s.Subscriptions.PerSocket, FlagSubscriptionsPerSocket, "MAX_SUBSCRIPTIONS_PER_SOCKET", 100, "most live subscriptions on one WebSocket")
	b.int(&s.Subscriptions.PerKey, FlagSubscriptionsPerKey, "MAX_SUBSCRIPTIONS_PER_KEY", 1_000, "most live subscriptions of one API key on this replica")
	b.int(&s.Subscriptions.PerReplica, FlagSubscriptionsPerReplica, "MAX_SUBSCRIPTIONS", 10_000, "most live subscriptions on this replica")
	b.int(&s.Fairness.KeyRate, "key-rate", "KEY_RATE", 500, "requests a second one API key may send to this replica (429 RATE_LIMITED above)")
	b.int(&s.Fairness.KeyBurst, "key-burst", "KEY_BURST", 1000, "requests one API key may send at once above -key-rate")
	b.int(&s.Fairness.KeyInFlight, "key-in-flight", "KEY_IN_FLIGHT", 32, "queries and mutations of one API key this replica runs at once (429 RATE_LIMITED above)")
	b.int(&s.Fairness.TenantRate, "tenant-rate", "TENANT_RATE", 1000, "requests a second the keys of one tenant together may send to this replica")
	b.int(&s.Fairness.TenantBurst, "tenant-burst", "TENANT_BURST", 2000, "requests the keys of one tenant may send at once above -tenant-rate")
	b.int(&s.Fairness.TenantInFlight, "tenant-in-flight", "TENANT_IN_FLIGHT", 64, "queries and mutations of one tenant's keys this replica runs at once")
	b.int(&s.Fairness.KeyPoolShare, "key-pool-share", "KEY_POOL_SHARE", 50, "percent of the database pool one API key's operations may hold at once; more wait their turn")
	b.int(&s.Fairness.TenantPoolShare, "tenant-pool-share", "TENANT_POOL_SHARE", 75, "percent of the database pool one tenant's operations may hold at once; more wait their turn")
	b.intOrZero(&s.Fairness.Operations, "operations", "OPERATIONS", "queries and mutations this replica runs at once, the others waiting their turn key by key; 0 sizes it from the cores")
	b.intOrZero(&s.Fairness.KeyOperations, "key-operations", "KEY_OPERATIONS", "queries and mutations of one API key this replica runs at once, divided among the tenants working; 0 sizes it from the cores")
	b.intOrZero(&s.MaxOpenConns, "max-open-conns", "MAX_OPEN_CONNS", "most database connections this replica opens; 0 sizes the pool from the cores and PostgreSQL's max_connections")

	s.DomainCacheTTL = 10 * time.Second
	s.TenantLinger = time.Second
	s.PageDefault = 20
	s.PageMax = 100
}

// Defaults returns every setting at its default, as if no flag and no
// environment variable were given.
func Defaults() Settings {
	var s Settings
	s.bind(newBinder(flag.NewFlagSet("defaults", flag.ContinueOnError), func(string) (string, bool) { return "", false }))
	return s
}

// Lookup reads one environment variable (os.LookupEnv, or a map in tests).
type Lookup func(key string) (string, bool)

// Load reads the settings from the environment, then from args; a flag wins
// over its variable. A malformed value of either is an error naming the
// variable or flag and the value, so a typo stops the server at start
// instead of being ignored. extra, when not nil, adds a subcommand's own
// flags to the same set. Load returns the arguments left after the flags.
func Load(name string, args []string, env Lookup, usage io.Writer, extra func(*flag.FlagSet)) (Settings, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(usage)
	var s Settings
	b := newBinder(fs, env)
	s.bind(b)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return Settings{}, nil, err
	}
	if err := errors.Join(b.errs...); err != nil {
		return Settings{}, nil, err
	}
	return s, fs.Args(), b.checkPositive()
}

// binder registers settings on a flag set, each defaulting to its
// environment variable when that is set and well formed.
type binder struct {
	fs       *flag.FlagSet
	env      Lookup
	errs     []error
	positive []positive
}

// positive is a numeric setting that must be above zero, checked after the
// flags are parsed.
type positive struct {
	flag, env string
	ok        func() bool
	zeroOK    bool // 0 is allowed too
}

func newBinder(fs *flag.FlagSet, env Lookup) *binder { return &binder{fs: fs, env: env} }

func (b *binder) usage(env, usage string) string { return usage + " (" + env + ")" }

// fromEnv returns the variable's value parsed, or def when it is unset; a
// malformed value is recorded as an error and def returned.
func fromEnv[T any](b *binder, env string, def T, parse func(string) (T, error)) T {
	raw, ok := b.env(env)
	if !ok {
		return def
	}
	v, err := parse(raw)
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("environment variable %s=%q: %v", env, raw, err))
		return def
	}
	return v
}

func (b *binder) string(p *string, name, env, def, usage string) {
	b.fs.StringVar(p, name, fromEnv(b, env, def, func(s string) (string, error) { return s, nil }), b.usage(env, usage))
}

func (b *binder) oneOf(p *string, name, env, def, usage string, allowed ...string) {
	choice := func(s string) (string, error) {
		for _, a := range allowed {
			if s == a {
				return s, nil
			}
		}
		return "", fmt.Errorf("use %s", strings.Join(allowed, ", "))
	}
	*p = fromEnv(b, env, def, choice)
	b.fs.Func(name, b.usage(env, usage+": "+strings.Join(allowed, ", ")+" (default "+def+")"), func(s string) error {
		v, err := choice(s)
		*p = v
		return err
	})
}

func (b *binder) bool(p *bool, name, env string, def bool, usage string) {
	b.fs.BoolVar(p, name, fromEnv(b, env, def, parseBool), b.usage(env, usage))
}

func (b *binder) duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	b.fs.DurationVar(p, name, fromEnv(b, env, def, parseDuration), b.usage(env, usage))
	b.mustBePositive(name, env, func() bool { return *p > 0 })
}

// durationOrZero is a duration whose default, 0, means "no limit".
func (b *binder) durationOrZero(p *time.Duration, name, env, usage string) {
	b.fs.DurationVar(p, name, fromEnv(b, env, 0, parseDuration), b.usage(env, usage))
	b.positive = append(b.positive, positive{flag: name, env: env, ok: func() bool { return *p >= 0 }, zeroOK: true})
}

func (b *binder) int(p *int, name, env string, def int, usage string) {
	b.fs.IntVar(p, name, fromEnv(b, env, def, parseInt[int]), b.usage(env, usage))
	b.mustBePositive(name, env, func() bool { return *p > 0 })
}

// intOrZero is an int whose default, 0, means "decided at start".
func (b *binder) intOrZero(p *int, name, env, usage string) {
	b.fs.IntVar(p, name, fromEnv(b, env, 0, parseInt[int]), b.usage(env, usage))
	b.positive = append(b.positive, positive{flag: name, env: env, ok: func() bool { return *p >= 0 }, zeroOK: true})
}

func (b *binder) int64(p *int64, name, env string, def int64, usage string) {
	b.fs.Int64Var(p, name, fromEnv(b, env, def, parseInt[int64]), b.usage(env, usage))
	b.mustBePositive(name, env, func() bool { return *p > 0 })
}

func (b *binder) list(p *[]string, name, env, usage string) {
	*p = fromEnv(b, env, nil, func(s string) ([]string, error) { return splitList(s), nil })
	b.fs.Func(name, b.usage(env, usage), func(s string) error {
		*p = splitList(s)
		return nil
	})
}

// listOf is a list each of whose items must be one of allowed.
func (b *binder) listOf(p *[]string, name, env, usage string, allowed ...string) {
	check := func(s string) ([]string, error) {
		items := splitList(s)
		for _, it := range items {
			if !slices.Contains(allowed, it) {
				return nil, fmt.Errorf("%q is not one of %s", it, strings.Join(allowed, ", "))
			}
		}
		return items, nil
	}
	*p = fromEnv(b, env, nil, check)
	b.fs.Func(name, b.usage(env, usage+": "+strings.Join(allowed, ", ")), func(s string) error {
		v, err := check(s)
		*p = v
		return err
	})
}

func (b *binder) mustBePositive(name, env string, ok func() bool) {
	b.positive = append(b.positive, positive{flag: name, env: env, ok: ok})
}

func (b *binder) checkPositive() error {
	var errs []error
	for _, p := range b.positive {
		switch {
		case p.ok():
		case p.zeroOK:
			errs = append(errs, fmt.Errorf("-%s (%s) must be zero or above", p.flag, p.env))
		default:
			errs = append(errs, fmt.Errorf("-%s (%s) must be above zero", p.flag, p.env))
		}
	}
	return errors.Join(errs...)
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

// Package engine is sessiongraph's domain logic: the operations agent
// runtimes, frontends and admins perform on sessions. It knows nothing of
// GraphQL or HTTP; every write goes through the store.
package engine

import (
	"time"

	"sessiongraph/ent"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
)

// Config holds the engine's settings; app fills it from config.Settings,
// where their defaults are.
type Config struct {
	// DefaultTTL is the inactivity after which a session expires when its
	// opener gives no TTL.
	DefaultTTL time.Duration
	// DefaultDomain is the domain of a session whose opener names none.
	DefaultDomain string
	// DomainCacheTTL bounds how long a replica may use entity types another
	// replica has since changed; this replica's own changes apply at once.
	DomainCacheTTL time.Duration
	// ReapInterval is how often the reaper runs.
	ReapInterval time.Duration
	// Retention is how long an expired session stays readable before the
	// reaper purges it.
	Retention time.Duration
	// ReceiptHashOnly keeps a context receipt's SHA-256 and not its text.
	ReceiptHashOnly bool
	// RecordContexts are the nodes whose context builds read with a CLIENT
	// key are also recorded as receipts.
	RecordContexts []contextbuild.Node
	// ReceiptTextRetention is how long a receipt keeps its text; 0 is as
	// long as its session.
	ReceiptTextRetention time.Duration
}

// Engine holds the engine's use cases, each a value of its own that holds
// only what it uses; callers name the one they need
// (engine.Writes.RecordRead).
type Engine struct {
	Sessions *Sessions
	Domains  *Domains
	Writes   *Writes
	Turns    *Turns
	Builds   *Builds
	Receipts *Receipts
	Live     *Live
	Reads    *Reads
	Transfer *Transfer
}

// New returns the engine's use cases, reading through client, writing
// through st and serving subscriptions from hub, this replica's event hub
// (nil for a command that serves none).
func New(client *ent.Client, st *store.Store, hub *events.Hub, cfg Config) *Engine {
	domains := &Domains{client: client, ttl: cfg.DomainCacheTTL, entries: map[string]cachedDomain{}}
	cache := newBuildCache()
	receipts := &Receipts{client: client, store: st, cfg: cfg}
	writes := &Writes{client: client, store: st, domains: domains, builds: cache}
	builds := &Builds{client: client, domains: domains, cache: cache, receipts: receipts}
	return &Engine{
		Sessions: &Sessions{client: client, store: st, cfg: cfg, domains: domains, receipts: receipts},
		Domains:  domains,
		Writes:   writes,
		Turns:    &Turns{client: client, store: st, domains: domains, writes: writes, tokenizers: newSessionTokenizers()},
		Builds:   builds,
		Receipts: receipts,
		Live:     &Live{client: client, hub: hub, domains: domains, builds: builds},
		Reads:    &Reads{client: client, domains: domains},
		Transfer: &Transfer{client: client, store: st},
	}
}

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

// Engine performs session operations.
type Engine struct {
	client  *ent.Client
	store   *store.Store
	cfg     Config
	domains domainCache
	hub     *events.Hub
	builds  *buildCache
}

// New returns an Engine that reads through client, writes through st and
// serves subscriptions from hub, this replica's event hub (nil for a
// command that serves none).
func New(client *ent.Client, st *store.Store, hub *events.Hub, cfg Config) *Engine {
	return &Engine{client: client, store: st, hub: hub, cfg: cfg, domains: domainCache{entries: map[string]cachedDomain{}}, builds: newBuildCache()}
}

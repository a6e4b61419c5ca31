// Package events delivers committed events to subscribers. Events are rows
// (written by the store in the transaction of the change); PostgreSQL's
// NOTIFY is only a doorbell. Each replica keeps one LISTEN connection, reads
// new events by sequence from the table when the bell rings (and on a timer,
// and after every reconnect), and fans them out in memory, so a missed or
// coalesced notification never loses an event.
package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"sessiongraph/internal/store"
)

// Event is one committed change as subscribers see it.
type Event struct {
	ID        uuid.UUID
	Sequence  int64
	SessionID uuid.UUID
	Tenant    string
	Kind      string
	Payload   map[string]any
	CreatedAt time.Time

	// encodings holds what subscribers' transports made of a published
	// event, by their key (see Encoded); nil for a replayed one.
	encodings *sync.Map
}

// Encoded returns what encode makes of the event for key. Subscribers of a
// published event share it: the first that asks with a key encodes, the
// others with the same key reuse its result, so that thousands of
// subscribers with the same operation cost one encoding. A replayed event
// is one subscriber's alone and is simply encoded. encode reports false for
// a result that must not be kept.
func (ev *Event) Encoded(key string, encode func() (any, bool)) (any, bool) {
	if ev.encodings == nil {
		return encode()
	}
	if v, ok := ev.encodings.Load(key); ok {
		return v, true
	}
	// Two subscribers may encode at once; they make the same thing, and
	// waiting for each other would cost more than the rare duplicate.
	v, ok := encode()
	if ok {
		ev.encodings.Store(key, v)
	}
	return v, ok
}

// Defaults of a Hub.
const (
	// pageSize is how many events one read fetches.
	pageSize = 500
	// pollInterval is the safety net for a doorbell that never rang.
	pollInterval = 2 * time.Second
	// BufferSize is how many events a subscriber may lag behind before it
	// is disconnected.
	BufferSize = 128
)

// ErrTooSlow ends a subscription that fell more than its buffer behind; the
// client resumes from its last cursor.
var ErrTooSlow = errors.New("subscriber fell too far behind and was disconnected: resume with the last cursor you received")

// Hub fans committed events out to this replica's subscribers.
type Hub struct {
	db  *sql.DB
	dsn string
	log *slog.Logger

	mu        sync.Mutex
	last      int64 // the highest sequence published
	bySession map[uuid.UUID]map[*sub]struct{}
	firehose  map[*sub]struct{} // subscribers of every session (filtered by tenant)
	ready     chan struct{}
	lag       time.Duration // commit-to-publish delay of the last event
}

// NewHub returns a hub reading events through db and listening on dsn.
func NewHub(db *sql.DB, dsn string, log *slog.Logger) *Hub {
	return &Hub{
		db: db, dsn: dsn, log: log,
		bySession: map[uuid.UUID]map[*sub]struct{}{},
		firehose:  map[*sub]struct{}{},
		ready:     make(chan struct{}),
	}
}

// Run listens and publishes until ctx ends.
func (h *Hub) Run(ctx context.Context) error {
	wake := make(chan struct{}, 1)
	ring := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	listener := pq.NewListener(h.dsn, 100*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		if ev == pq.ListenerEventReconnected {
			h.log.Info("event listener reconnected; catching up from the table")
			ring()
		}
		if err != nil {
			h.log.Warn("event listener", "event", ev, "error", err)
		}
	})
	defer listener.Close()
	if err := listener.Listen(store.NotifyChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := h.start(ctx); err != nil {
		return err
	}
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			h.closeAll()
			return nil
		case <-listener.Notify: // a doorbell, or nil after a reconnect
			drain(listener.Notify)
		case <-wake:
		case <-ticker.C:
		}
		if err := h.catchUp(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("reading events", "error", err)
		}
	}
}

// drain swallows doorbells that rang meanwhile: one read serves them all.
func drain(ch <-chan *pq.Notification) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// start sets the hub's position to the newest event; subscribers replay
// older ones from the table themselves.
func (h *Hub) start(ctx context.Context) error {
	var last sql.NullInt64
	if err := h.db.QueryRowContext(ctx, `SELECT MAX(sequence) FROM events`).Scan(&last); err != nil {
		return fmt.Errorf("events position: %w", err)
	}
	h.mu.Lock()
	h.last = last.Int64
	h.mu.Unlock()
	close(h.ready)
	return nil
}

// Ready is closed once the hub knows its position and accepts subscribers.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// catchUp reads and publishes every event after the hub's position.
func (h *Hub) catchUp(ctx context.Context) error {
	for {
		h.mu.Lock()
		after := h.last
		h.mu.Unlock()
		page, err := readEvents(ctx, h.db, after, 0, Filter{})
		if err != nil {
			return err
		}
		for _, ev := range page {
			h.publish(ev)
		}
		if len(page) < pageSize {
			return nil
		}
	}
}

// publish hands an event to every matching subscriber without waiting: a
// subscriber whose buffer is full is cut off with ErrTooSlow, never skipped.
func (h *Hub) publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Sequence <= h.last {
		return
	}
	h.last = ev.Sequence
	h.lag = time.Since(ev.CreatedAt)
	shared := &ev // one immutable copy for every subscriber
	shared.encodings = &sync.Map{}
	for s := range h.bySession[ev.SessionID] {
		h.offerLocked(s, shared)
	}
	for s := range h.firehose {
		h.offerLocked(s, shared)
	}
}

func (h *Hub) offerLocked(s *sub, ev *Event) {
	if !s.filter.matches(*ev) {
		return
	}
	if !s.direct {
		select {
		case s.replayBuffer <- ev:
		default:
			h.dropLocked(s, ErrTooSlow)
		}
		return
	}
	if ev.Sequence <= s.cursor {
		return
	}
	if !s.offer(ev) {
		h.dropLocked(s, ErrTooSlow)
		return
	}
	s.cursor = ev.Sequence
}

// Lag is how long after its commit the last event was published.
func (h *Hub) Lag() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lag
}

// Subscribers counts the live subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.firehose)
	for _, set := range h.bySession {
		n += len(set)
	}
	return n
}

// dropLocked unregisters a subscriber. A live subscriber is ended here; a
// replaying one is ended by its replay goroutine, which may be sending.
func (h *Hub) dropLocked(s *sub, err error) {
	if s.dropped {
		return
	}
	s.dropped, s.err = true, err
	if s.filter.SessionID != nil {
		set := h.bySession[*s.filter.SessionID]
		delete(set, s)
		if len(set) == 0 {
			delete(h.bySession, *s.filter.SessionID)
		}
	} else {
		delete(h.firehose, s)
	}
	if s.direct {
		s.end(err)
	}
}

func (h *Hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.bySession {
		for s := range set {
			h.dropLocked(s, nil)
		}
	}
	for s := range h.firehose {
		h.dropLocked(s, nil)
	}
}

// readEvents reads up to pageSize events after a sequence (and, when upTo is
// positive, not after upTo) that match the filter, in order.
func readEvents(ctx context.Context, db *sql.DB, after, upTo int64, f Filter) ([]Event, error) {
	q := `SELECT id, sequence, session_id, tenant, kind, payload, created_at FROM events WHERE sequence > $1`
	args := []any{after}
	if upTo > 0 {
		args = append(args, upTo)
		q += fmt.Sprintf(" AND sequence <= $%d", len(args))
	}
	if f.SessionID != nil {
		args = append(args, *f.SessionID)
		q += fmt.Sprintf(" AND session_id = $%d", len(args))
	}
	if f.Tenant != nil {
		args = append(args, *f.Tenant)
		q += fmt.Sprintf(" AND tenant = $%d", len(args))
	}
	q += fmt.Sprintf(" ORDER BY sequence LIMIT %d", pageSize)
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ev Event
		var payload []byte
		if err := rows.Scan(&ev.ID, &ev.Sequence, &ev.SessionID, &ev.Tenant, &ev.Kind, &payload, &ev.CreatedAt); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(payload, &ev.Payload); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}

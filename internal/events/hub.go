// Package events delivers committed events to subscribers. Events are rows
// (written by the store in the transaction of the change); PostgreSQL's
// NOTIFY is only a doorbell, rung after the commit (Doorbell). Each replica
// keeps one LISTEN connection, reads new events from the table when the bell
// rings (and on a timer, and after every reconnect), and fans them out in
// memory, so a missed or coalesced notification never loses an event.
//
// Two reads feed the hub. The feed of every session is read in (xid,
// session, sequence) order, only below the snapshot horizon, where every
// event is final: a transaction that commits late is never skipped, and no
// writer takes a lock for it. And the sessions a doorbell names are read by
// their own sequence, at once: a session's events commit in the order of
// their numbers, so its subscribers need not wait for the horizon. A
// subscriber of one session takes each event once, by its sequence, and
// fills any gap from the table. docs/events.md has the rules and their cost.
package events

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Event is one committed change as subscribers see it.
type Event struct {
	ID uuid.UUID
	// Sequence numbers the event within its session, from 1.
	Sequence int64
	// Xid orders the feed of every session (see Position).
	Xid       int64
	SessionID uuid.UUID
	Tenant    string
	Kind      string
	// Turn is the session's turn the event belongs to (events.turn); nil
	// when it belongs to none.
	Turn      *int
	Payload   map[string]any
	CreatedAt time.Time

	// encodings holds what subscribers' transports made of a published
	// event, by their key (see Encoded); nil for a replayed one.
	encodings *sync.Map
}

// Position is where the event stands in the feed of every session.
func (ev *Event) Position() Position {
	return Position{Xid: ev.Xid, SessionID: ev.SessionID, Sequence: ev.Sequence}
}

// Cursor is the event's position as the opaque cursor that resumes a
// subscription across sessions after it.
func (ev *Event) Cursor() string { return ev.Position().String() }

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
	// sessionPage is how many events of one session a read of the sessions
	// a bell named fetches: at most half a subscriber's buffer at once, so
	// that a backlog (a hub that was slow to read, a burst of commits)
	// reaches a subscriber in pieces it can take, readGap apart, instead of
	// cutting it off as too slow.
	sessionPage = BufferSize / 2
	// pollInterval is the safety net for a doorbell that never rang.
	pollInterval = 2 * time.Second
	// waitingRetry is how soon the hub looks again when events have
	// committed above the snapshot horizon: the transaction holding the
	// horizon back may write no event and so ring no bell when it ends.
	// The delay doubles, up to waitingRetryMax, while the horizon stays put:
	// a held horizon costs a replica four reads a second, and delays the
	// feed at most that much past the transaction's end.
	waitingRetry    = 5 * time.Millisecond
	waitingRetryMax = 250 * time.Millisecond
	// readGap spaces the hub's reads under load: the bells of the commits
	// that land meanwhile are served by one read.
	readGap = 5 * time.Millisecond
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

	wake chan struct{} // a bell rung, here or by a NOTIFY
	// origin tells this replica's doorbells from other replicas'.
	origin string
	// poll is how often the hub reads without a doorbell (pollInterval).
	poll time.Duration

	mu        sync.Mutex
	last      Position // published up to here: every final event before it
	bySession map[uuid.UUID]map[*sub]struct{}
	firehose  map[*sub]struct{} // subscribers of every session (filtered by tenant)
	// offered is, for each session with subscribers, the newest sequence
	// offered to them; rung holds those the doorbell named since the last
	// read of sessions.
	offered map[uuid.UUID]int64
	rung    map[uuid.UUID]struct{}
	// needFeed asks the next read for the feed of every session.
	needFeed bool
	ready    chan struct{}
	lag      time.Duration // commit-to-publish delay of the last event a subscriber was offered
}

// NewHub returns a hub reading events through db and listening on dsn. It
// reads without a doorbell every poll, or every pollInterval when poll is
// 0 (tests set it long to prove that a bell, not the timer, delivered an
// event).
func NewHub(db *sql.DB, dsn string, poll time.Duration, log *slog.Logger) *Hub {
	if poll <= 0 {
		poll = pollInterval
	}
	return &Hub{
		db: db, dsn: dsn, log: log,
		wake:      make(chan struct{}, 1),
		origin:    uuid.NewString(),
		poll:      poll,
		bySession: map[uuid.UUID]map[*sub]struct{}{},
		firehose:  map[*sub]struct{}{},
		offered:   map[uuid.UUID]int64{},
		rung:      map[uuid.UUID]struct{}{},
		ready:     make(chan struct{}),
	}
}

// wakeUp makes the hub read the table now (or, if it is reading, once more).
func (h *Hub) wakeUp() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// changed says that sessions have new events: those with subscribers here
// are read at once, by their sequence.
func (h *Hub) changed(sessions []uuid.UUID) {
	h.mu.Lock()
	for _, id := range sessions {
		if _, ok := h.bySession[id]; ok {
			h.rung[id] = struct{}{}
		}
	}
	h.mu.Unlock()
	h.wakeUp()
}

// start sets the hub's position to the snapshot horizon: it publishes the
// events that become final from now on; subscribers replay older ones from
// the table themselves.
func (h *Hub) start(ctx context.Context) error {
	now, err := h.Now(ctx)
	if err != nil {
		return fmt.Errorf("events position: %w", err)
	}
	h.mu.Lock()
	h.last = now
	h.mu.Unlock()
	close(h.ready)
	return nil
}

// Now is the position of the feed of every session now, as the database
// (not this hub, which may lag) knows it: every event committed later comes
// after it. A subscription across sessions that resumes after it receives
// every event committed after Now was read (and perhaps a few committed just
// before).
func (h *Hub) Now(ctx context.Context) (Position, error) {
	horizon, err := readHorizon(ctx, h.db)
	return horizonPosition(horizon), err
}

// Ready is closed once the hub knows its position and accepts subscribers.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// publish hands an event of the feed to every matching subscriber without
// waiting: a subscriber whose buffer is full is cut off with ErrTooSlow,
// never skipped.
func (h *Hub) publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !ev.Position().After(h.last) {
		return
	}
	h.last = ev.Position()
	if len(h.firehose) > 0 || len(h.bySession[ev.SessionID]) > 0 {
		h.lag = time.Since(ev.CreatedAt)
	}
	shared := &ev // one immutable copy for every subscriber
	shared.encodings = &sync.Map{}
	h.offerSessionLocked(shared)
	for s := range h.firehose {
		h.offerLocked(s, shared)
	}
}

// publishSession hands an event read by its session's sequence to that
// session's subscribers (the feed brings it to the others later).
func (h *Hub) publishSession(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	shared := &ev
	shared.encodings = &sync.Map{}
	h.offerSessionLocked(shared)
}

func (h *Hub) offerSessionLocked(ev *Event) {
	set, ok := h.bySession[ev.SessionID]
	if !ok {
		return
	}
	if last, known := h.offered[ev.SessionID]; known && ev.Sequence <= last {
		return // offered already, by the other read
	}
	h.offered[ev.SessionID] = ev.Sequence
	h.lag = time.Since(ev.CreatedAt)
	for s := range set {
		h.offerLocked(s, ev)
	}
}

func (h *Hub) offerLocked(s *sub, ev *Event) {
	if !s.filter.matches(*ev) {
		return
	}
	if !s.direct {
		if !s.wants(ev) {
			return
		}
		select {
		case s.replayBuffer <- ev:
		default:
			h.dropLocked(s, ErrTooSlow)
		}
		return
	}
	if !s.isNew(ev) {
		return
	}
	if s.gapBefore(ev) {
		// Events between its cursor and this one reached this subscriber
		// by neither read (it joined between them): it fills the gap from
		// the table, then takes this one.
		h.catchUpLocked(s, ev)
		return
	}
	if !s.offer(ev) {
		h.dropLocked(s, ErrTooSlow)
		return
	}
	s.advance(ev)
}

// Lag is how long after its commit the last event offered to a subscriber
// here was offered.
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

// Live counts the subscriptions past their replay, to which the hub offers
// events directly.
func (h *Hub) Live() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for s := range h.firehose {
		if s.direct {
			n++
		}
	}
	for _, set := range h.bySession {
		for s := range set {
			if s.direct {
				n++
			}
		}
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
	if id := s.filter.SessionID; id != nil {
		set := h.bySession[*id]
		delete(set, s)
		if len(set) == 0 {
			delete(h.bySession, *id)
			delete(h.offered, *id)
			delete(h.rung, *id)
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

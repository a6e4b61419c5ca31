package events

import (
	"context"
	"database/sql"

	"github.com/google/uuid"
)

// Filter says which events a subscriber wants: one session's, or every
// session's of a tenant, or (both nil) all.
type Filter struct {
	SessionID *uuid.UUID
	Tenant    *string
	// Kinds, when set, keeps only these kinds.
	Kinds map[string]bool
}

func (f Filter) matches(ev Event) bool {
	return (f.SessionID == nil || *f.SessionID == ev.SessionID) &&
		(f.Tenant == nil || *f.Tenant == ev.Tenant) &&
		(f.Kinds == nil || f.Kinds[ev.Kind])
}

// sub is one subscriber. While it replays the table, live events wait in
// replayBuffer; once it is live, the hub offers events straight to it and
// no goroutine serves it.
type sub struct {
	filter       Filter
	replayBuffer chan *Event
	direct       bool
	offer        func(*Event) bool
	end          func(error)
	cursor       int64 // the last sequence delivered, once direct
	dropped      bool
	err          error
}

// Source delivers one subscription's events, in order and once each, then
// ends it once with why it stopped: nil when the context ended, ErrTooSlow
// when the subscriber fell more than BufferSize events behind, or a database
// error during replay. wait delivers a replayed event and may block (false
// stops the subscription); offer delivers a live event without blocking and
// returns false when the subscriber's buffer is full; end must not block.
type Source func(wait, offer func(*Event) bool, end func(error))

// Stream is one subscription's events as a channel.
type Stream struct {
	// C delivers the events; it is closed when the subscription ends.
	C   <-chan *Event
	err error
}

// Err says why C was closed (see Source).
func (s *Stream) Err() error { return s.err }

// FromNow subscribes to events committed after the subscription starts.
const FromNow int64 = -1

// Subscribe is Source delivered to a channel.
func (h *Hub) Subscribe(ctx context.Context, f Filter, after int64) *Stream {
	out := make(chan *Event, BufferSize)
	st := &Stream{C: out}
	h.Source(ctx, f, after)(func(ev *Event) bool {
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}, func(ev *Event) bool {
		select {
		case out <- ev:
			return true
		default:
			return false
		}
	}, func(err error) {
		st.err = err
		close(out)
	})
	return st
}

// Source subscribes to every event matching f with a sequence after `after`
// (FromNow: after the newest event in the table): first those already in
// the table, then live ones. The subscriber is registered before it
// replays, so nothing committed in between is missed, and live events the
// replay already delivered are skipped. A goroutine serves the replay; a
// live subscriber costs no goroutine.
func (h *Hub) Source(ctx context.Context, f Filter, after int64) Source {
	return func(wait, offer func(*Event) bool, end func(error)) {
		select {
		case <-h.ready:
		case <-ctx.Done():
			end(nil)
			return
		}
		s := &sub{filter: f, replayBuffer: make(chan *Event, BufferSize), offer: offer, end: end}
		h.mu.Lock()
		joinAt := h.last
		if f.SessionID != nil {
			set := h.bySession[*f.SessionID]
			if set == nil {
				set = map[*sub]struct{}{}
				h.bySession[*f.SessionID] = set
			}
			set[s] = struct{}{}
		} else {
			h.firehose[s] = struct{}{}
		}
		h.mu.Unlock()
		context.AfterFunc(ctx, func() {
			h.mu.Lock()
			h.dropLocked(s, nil)
			h.mu.Unlock()
		})
		go h.replay(ctx, s, after, joinAt, wait)
	}
}

// replay delivers the table's events after `after` up to joinAt, then the
// live events buffered meanwhile, and hands the subscriber to the hub.
func (h *Hub) replay(ctx context.Context, s *sub, after, joinAt int64, wait func(*Event) bool) {
	finish := func(err error) {
		h.mu.Lock()
		h.dropLocked(s, err)
		err = s.err
		h.mu.Unlock()
		s.end(err)
	}
	if after == FromNow {
		// Now is the table's newest event, not the hub's position: the hub
		// may not have published what another replica just committed.
		var newest sql.NullInt64
		if err := h.db.QueryRowContext(ctx, `SELECT MAX(sequence) FROM events`).Scan(&newest); err != nil {
			finish(ctxErr(ctx, err))
			return
		}
		after = newest.Int64
	}
	cursor := after
	for cursor < joinAt {
		page, err := readEvents(ctx, h.db, cursor, joinAt, s.filter)
		if err != nil {
			finish(ctxErr(ctx, err))
			return
		}
		for i := range page {
			if s.filter.matches(page[i]) && !wait(&page[i]) {
				finish(nil)
				return
			}
		}
		if len(page) < pageSize {
			break
		}
		cursor = page[len(page)-1].Sequence
	}
	cursor = max(cursor, joinAt)
	for {
		// Deliver what arrived during the replay, blocking, until the buffer
		// is empty; then switch to direct delivery under the lock, so no
		// event can slip between the two.
		select {
		case ev := <-s.replayBuffer:
			if ev.Sequence > cursor {
				if !wait(ev) {
					finish(nil)
					return
				}
				cursor = ev.Sequence
			}
			continue
		default:
		}
		h.mu.Lock()
		if s.dropped || len(s.replayBuffer) > 0 {
			dropped := s.dropped
			h.mu.Unlock()
			if dropped {
				finish(nil)
				return
			}
			continue
		}
		s.direct, s.cursor, s.replayBuffer = true, cursor, nil
		h.mu.Unlock()
		return
	}
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil // the subscriber left
	}
	return err
}

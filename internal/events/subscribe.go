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

type sub struct {
	filter  Filter
	live    chan *Event
	dropped bool
}

// Source delivers one subscription's events: it calls emit with each event,
// in order and once each, on the subscriber's own goroutine (emit may block
// and returns false to stop), then end once with why it stopped: nil when
// the context ended or emit stopped, ErrTooSlow when the subscriber fell
// behind, or a database error during replay.
type Source func(emit func(*Event) bool, end func(error))

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
	out := make(chan *Event)
	st := &Stream{C: out}
	h.Source(ctx, f, after)(func(ev *Event) bool {
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}, func(err error) {
		st.err = err
		close(out)
	})
	return st
}

// Source subscribes to every event matching f with a sequence after `after`
// (FromNow: only new ones): first those already in the table, then live
// ones. The subscriber is registered with the hub when the returned Source
// is started and before it replays, so nothing committed in between is
// missed; live events the replay already delivered are skipped. One
// goroutine serves the subscription.
func (h *Hub) Source(ctx context.Context, f Filter, after int64) Source {
	return func(emit func(*Event) bool, end func(error)) {
		s := &sub{filter: f, live: make(chan *Event, bufferSize)}
		select {
		case <-h.ready:
		case <-ctx.Done():
			end(nil)
			return
		}
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
		go func() {
			if after == FromNow {
				// Now is the table's newest event, not the hub's position: the
				// hub may not have published what another replica just
				// committed, and that is not new to this subscriber.
				var newest sql.NullInt64
				if err := h.db.QueryRowContext(ctx, `SELECT MAX(sequence) FROM events`).Scan(&newest); err != nil {
					h.mu.Lock()
					h.dropLocked(s)
					h.mu.Unlock()
					if ctx.Err() != nil {
						err = nil // the subscriber left
					}
					end(err)
					return
				}
				after = newest.Int64
			}
			err := h.serve(ctx, s, f, after, joinAt, emit)
			h.mu.Lock()
			h.dropLocked(s)
			h.mu.Unlock()
			end(err)
		}()
	}
}

// serve replays the table from after up to joinAt (nothing when after is
// past it), then forwards live events after the cursor.
func (h *Hub) serve(ctx context.Context, s *sub, f Filter, after, joinAt int64, emit func(*Event) bool) error {
	cursor := after
	for cursor < joinAt {
		page, err := readEvents(ctx, h.db, cursor, joinAt, f)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		for i := range page {
			if f.matches(page[i]) && !emit(&page[i]) {
				return nil
			}
		}
		if len(page) < pageSize {
			break
		}
		cursor = page[len(page)-1].Sequence
	}
	cursor = max(cursor, joinAt)
	for {
		select {
		case ev, ok := <-s.live:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return ErrTooSlow
			}
			if ev.Sequence <= cursor {
				continue
			}
			if !emit(ev) {
				return nil
			}
			cursor = ev.Sequence
		case <-ctx.Done():
			return nil
		}
	}
}

package events

import (
	"context"

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
	live    chan Event
	dropped bool
}

// Stream is one subscription's events, in order, each once.
type Stream struct {
	// C delivers the events; it is closed when the subscription ends.
	C   <-chan *Event
	err error
}

// Err says why C was closed: nil when the context ended, ErrTooSlow when
// the subscriber fell behind, or a database error during replay.
func (s *Stream) Err() error { return s.err }

// FromNow subscribes to events committed after the subscription starts.
const FromNow int64 = -1

// Subscribe delivers, in order and once each, every event matching f with a
// sequence after `after` (FromNow: only new ones): first those already in
// the table, then live ones. The hub registers the subscriber before it
// replays, so nothing committed in between is missed, and skips live events
// the replay already delivered.
func (h *Hub) Subscribe(ctx context.Context, f Filter, after int64) *Stream {
	out := make(chan *Event)
	st := &Stream{C: out}
	s := &sub{filter: f, live: make(chan Event, bufferSize)}
	select {
	case <-h.ready:
	case <-ctx.Done():
		close(out)
		return st
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
	if after == FromNow || after > joinAt {
		after = max(after, joinAt)
	}

	go func() {
		defer close(out)
		defer func() {
			h.mu.Lock()
			h.dropLocked(s)
			h.mu.Unlock()
		}()
		send := func(ev Event) bool {
			select {
			case out <- &ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		cursor := after
		for cursor < joinAt {
			page, err := readEvents(ctx, h.db, cursor, joinAt, f)
			if err != nil {
				if ctx.Err() == nil {
					st.err = err
				}
				return
			}
			for _, ev := range page {
				if !f.matches(ev) {
					continue
				}
				if !send(ev) {
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
			select {
			case ev, ok := <-s.live:
				if !ok {
					if ctx.Err() == nil {
						st.err = ErrTooSlow
					}
					return
				}
				if ev.Sequence <= cursor {
					continue
				}
				if !send(ev) {
					return
				}
				cursor = ev.Sequence
			case <-ctx.Done():
				return
			}
		}
	}()
	return st
}

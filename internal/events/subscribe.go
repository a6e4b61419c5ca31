package events

import (
	"context"

	"github.com/google/uuid"
)

// Filter says which events a subscriber wants: one session's, all of them,
// resumed by its sequence; or every session's, of a tenant and of some kinds
// when those are set, resumed by their position in the feed of every
// session.
type Filter struct {
	SessionID *uuid.UUID
	// Tenant and Kinds narrow a subscription across sessions.
	Tenant *string
	Kinds  map[string]bool
}

func (f Filter) matches(ev Event) bool {
	if f.SessionID != nil {
		return *f.SessionID == ev.SessionID
	}
	return (f.Tenant == nil || *f.Tenant == ev.Tenant) && (f.Kinds == nil || f.Kinds[ev.Kind])
}

// sub is one subscriber. While it replays the table, live events wait in
// replayBuffer; once it is live, the hub offers events straight to it and
// no goroutine serves it.
type sub struct {
	ctx          context.Context
	filter       Filter
	replayBuffer chan *Event
	buffered     int64 // the newest sequence in replayBuffer, for one session's subscriber
	direct       bool
	wait, offer  func(*Event) bool
	end          func(error)
	cursor       Cursor // the last event delivered
	dropped      bool
	err          error
}

// wants reports whether a replaying subscriber should buffer ev: a session's
// events reach it by two reads, and one copy is enough.
func (s *sub) wants(ev *Event) bool {
	if s.filter.SessionID == nil {
		return true
	}
	if ev.Sequence <= s.buffered {
		return false
	}
	s.buffered = ev.Sequence
	return true
}

// gapBefore reports whether a subscriber of one session would skip events
// by taking ev now. (A session's numbers have gaps only where events were
// deleted with their session, or were numbered before this scheme; filling
// such a gap finds nothing, which is fine.)
func (s *sub) gapBefore(ev *Event) bool {
	return s.filter.SessionID != nil && ev.Sequence > s.cursor.sequence+1
}

// isNew reports whether ev comes after the subscriber's cursor: by its
// sequence for a subscriber of one session, by its position otherwise.
func (s *sub) isNew(ev *Event) bool {
	if s.filter.SessionID != nil {
		return ev.Sequence > s.cursor.sequence
	}
	return ev.Position().After(s.cursor.position)
}

// advance moves the subscriber's cursor to ev.
func (s *sub) advance(ev *Event) {
	s.cursor.sequence, s.cursor.position = ev.Sequence, ev.Position()
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

// Subscribe is Source delivered to a channel.
func (h *Hub) Subscribe(ctx context.Context, f Filter, after Cursor) *Stream {
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

// Source subscribes to every event matching f after `after`: first those
// already in the table, then live ones. The subscriber is registered before
// it replays, so nothing committed in between is missed, and live events
// the replay already delivered are skipped. A goroutine serves the replay;
// a live subscriber costs no goroutine.
func (h *Hub) Source(ctx context.Context, f Filter, after Cursor) Source {
	return func(wait, offer func(*Event) bool, end func(error)) {
		select {
		case <-h.ready:
		case <-ctx.Done():
			end(nil)
			return
		}
		s := &sub{ctx: ctx, filter: f, replayBuffer: make(chan *Event, BufferSize), wait: wait, offer: offer, end: end}
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
		go h.replay(s, after, joinAt)
	}
}

// replay delivers the table's events after `after`, then the live events
// buffered meanwhile, and hands the subscriber to the hub.
func (h *Hub) replay(s *sub, after Cursor, joinAt Position) {
	ctx := s.ctx
	finish := func(err error) {
		h.mu.Lock()
		h.dropLocked(s, err)
		err = s.err
		h.mu.Unlock()
		s.end(ctxErr(ctx, err))
	}
	var err error
	left := false
	if s.filter.SessionID != nil {
		s.cursor, left, err = h.replaySession(ctx, s, after)
	} else {
		s.cursor, left, err = h.replayFeed(ctx, s, after, joinAt)
	}
	if err != nil || left {
		finish(err)
		return
	}
	for {
		// Deliver what arrived during the replay, blocking, until the buffer
		// is empty; then switch to direct delivery under the lock, so no
		// event can slip between the two.
		select {
		case ev := <-s.replayBuffer:
			if s.gapBefore(ev) { // the table has what came between
				if s.cursor, left, err = h.replaySession(ctx, s, s.cursor); err != nil || left {
					finish(err)
					return
				}
			}
			if s.isNew(ev) {
				if !s.wait(ev) {
					finish(nil)
					return
				}
				s.advance(ev)
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
		s.direct, s.replayBuffer = true, nil
		if id := s.filter.SessionID; id != nil {
			if _, known := h.offered[*id]; !known {
				// The first live subscriber of the session here: the hub may
				// now read the session by its sequence, from here. (Not past
				// what it offered the others when it knows: they would wait
				// for events it would never offer again.)
				h.offered[*id] = s.cursor.sequence
			}
		}
		h.mu.Unlock()
		return
	}
}

// replaySession delivers one session's events after the cursor's sequence
// (from now: after its newest) and returns the cursor it reached; left
// reports that the subscriber left.
func (h *Hub) replaySession(ctx context.Context, s *sub, after Cursor) (cursor Cursor, left bool, err error) {
	session := *s.filter.SessionID
	seq := after.sequence
	if after.fromNow {
		if seq, err = newestSequence(ctx, h.db, session); err != nil {
			return cursor, false, err
		}
	}
	for {
		page, err := readSession(ctx, h.db, session, seq)
		if err != nil {
			return cursor, false, err
		}
		for i := range page {
			if !s.wait(&page[i]) {
				return cursor, true, nil
			}
			seq = page[i].Sequence
		}
		if len(page) < pageSize {
			return AfterSequence(seq), false, nil
		}
	}
}

// replayFeed delivers the events of every session after the cursor's
// position (from now: after the horizon) up to joinAt, where the hub was
// when the subscriber joined, and returns the cursor it reached; left
// reports that the subscriber left. Events up to joinAt are final, so the
// replay needs no horizon of its own.
func (h *Hub) replayFeed(ctx context.Context, s *sub, after Cursor, joinAt Position) (cursor Cursor, left bool, err error) {
	pos := after.position
	if after.fromNow {
		if pos, err = h.Now(ctx); err != nil {
			return cursor, false, err
		}
	}
	for joinAt.After(pos) {
		page, err := readFeed(ctx, h.db, pos, &joinAt, s.filter)
		if err != nil {
			return cursor, false, err
		}
		for i := range page.events {
			if !s.wait(&page.events[i]) {
				return cursor, true, nil
			}
		}
		if len(page.events) < pageSize {
			break
		}
		pos = page.events[len(page.events)-1].Position()
	}
	// Every matching event up to joinAt has been delivered.
	if joinAt.After(pos) {
		pos = joinAt
	}
	return AfterPosition(pos), false, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil // the subscriber left
	}
	return err
}

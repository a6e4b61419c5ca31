package events

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// Run listens and publishes until ctx ends.
func (h *Hub) Run(ctx context.Context) error {
	listener := pq.NewListener(h.dsn, 100*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		if ev == pq.ListenerEventReconnected {
			h.log.Info("event listener reconnected; catching up from the table")
			h.wakeUp()
		}
		if err != nil {
			h.log.Warn("event listener", "event", ev, "error", err)
		}
	})
	defer listener.Close()
	if err := listener.Listen(NotifyChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := h.start(ctx); err != nil {
		return err
	}
	ticker := time.NewTicker(h.poll)
	defer ticker.Stop()
	retry := time.NewTimer(h.poll)
	defer retry.Stop()
	var backoff time.Duration
	for {
		timed := false
		select {
		case <-ctx.Done():
			h.closeAll()
			return nil
		case n := <-listener.Notify: // a doorbell, or nil after a reconnect
			h.heard(n)
			h.drain(listener.Notify)
		case <-h.wake:
		case <-ticker.C:
			timed = true
		case <-retry.C:
			timed = true
		}
		if err := h.catchUpSessions(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("reading sessions' events", "error", err)
		}
		if !timed && !h.feedWanted() {
			continue // the bell named every session that has subscribers here
		}
		waiting, progressed, err := h.catchUp(ctx)
		if err != nil && ctx.Err() == nil {
			h.log.Warn("reading events", "error", err)
		}
		switch {
		case !waiting:
			backoff = 0
		case progressed || backoff == 0:
			backoff = waitingRetry
		default:
			backoff = min(2*backoff, waitingRetryMax)
		}
		if backoff > 0 {
			retry.Reset(backoff)
		}
		select {
		case <-ctx.Done():
		case <-time.After(readGap):
		}
	}
}

// heard notes what a doorbell says. A bell this replica rang itself was
// answered when it rang (the hub was woken then); a bell that names no
// session (too many, or a listener that reconnected: nil) asks for the feed.
func (h *Hub) heard(n *pq.Notification) {
	if n == nil {
		h.wantFeed()
		return
	}
	origin, sessions, named := parseBell(n.Extra)
	if origin == h.origin {
		return
	}
	if !named {
		h.wantFeed()
	}
	h.changed(sessions)
}

// wantFeed makes the next read include the feed of every session.
func (h *Hub) wantFeed() {
	h.mu.Lock()
	h.needFeed = true
	h.mu.Unlock()
	h.wakeUp()
}

// feedWanted reports whether the feed of every session must be read now:
// when it has subscribers here, or when the sessions' own reads could not
// serve someone. Otherwise the feed waits for the timer, and costs nothing
// per commit.
func (h *Hub) feedWanted() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.firehose) > 0 || h.needFeed
}

// drain takes the doorbells that rang meanwhile: one read serves them all.
func (h *Hub) drain(ch <-chan *pq.Notification) {
	for {
		select {
		case n := <-ch:
			h.heard(n)
		default:
			return
		}
	}
}

// catchUp reads and publishes every final event after the hub's position.
// It reports whether events committed above the snapshot horizon wait for
// an older transaction, and whether it published anything.
func (h *Hub) catchUp(ctx context.Context) (waiting, progressed bool, err error) {
	for {
		h.mu.Lock()
		after := h.last
		h.needFeed = false
		h.mu.Unlock()
		page, err := readFeed(ctx, h.db, after, nil, Filter{})
		if err != nil {
			return false, progressed, err
		}
		for _, ev := range page.events {
			h.publish(ev)
		}
		progressed = progressed || len(page.events) > 0
		if len(page.events) < pageSize {
			// Every final event was read: the hub has passed the horizon.
			h.passed(horizonPosition(page.horizon))
			return page.waiting, progressed, nil
		}
	}
}

// passed moves the hub's position to p, past which it has published
// everything, if p is further.
func (h *Hub) passed(p Position) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.After(h.last) {
		h.last = p
	}
}

// catchUpSessions reads the new events of the sessions the doorbell named
// that have subscribers here, by their sequence, and offers them to those
// subscribers without waiting for the horizon. A session whose subscribers
// have not yet been offered anything is left to the feed: the hub does not
// know where they are.
func (h *Hub) catchUpSessions(ctx context.Context) error {
	h.mu.Lock()
	var ids []uuid.UUID
	var after []int64
	for id := range h.rung {
		if last, known := h.offered[id]; known {
			ids, after = append(ids, id), append(after, last)
		} else {
			h.needFeed = true // its subscribers are still replaying: the feed brings it
		}
	}
	clear(h.rung)
	h.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	evs, full, err := readSessions(ctx, h.db, ids, after)
	if err != nil {
		return err // the feed delivers them
	}
	for _, ev := range evs {
		h.publishSession(ev)
	}
	if len(full) > 0 {
		h.changed(full) // more than a page: read on
	}
	return nil
}

// catchUpLocked turns a live subscriber of one session that missed events
// back into a replaying one: it reads the gap from the table, delivers ev
// (now buffered) after it, and goes live again.
func (h *Hub) catchUpLocked(s *sub, ev *Event) {
	s.direct, s.replayBuffer = false, make(chan *Event, BufferSize)
	s.buffered = ev.Sequence
	s.replayBuffer <- ev
	go h.replay(s, AfterSequence(s.cursor.sequence), Position{})
}

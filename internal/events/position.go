package events

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Position is where an event stands in the feed of every session. The feed
// is ordered by (Xid, SessionID, Sequence), and only events whose Xid is
// below the snapshot horizon (every transaction with a smaller id has
// ended) are read: those are final, so once the feed has passed a position,
// no event before it can still commit (docs/events.md).
type Position struct {
	Xid       int64
	SessionID uuid.UUID
	Sequence  int64
}

// horizonPosition is the position before which every event is final when
// the snapshot horizon is horizon: no event has sequence 0, so every event
// with that xid comes after it.
func horizonPosition(horizon int64) Position { return Position{Xid: horizon} }

// After reports whether p comes after q in the feed.
func (p Position) After(q Position) bool {
	if p.Xid != q.Xid {
		return p.Xid > q.Xid
	}
	// PostgreSQL orders uuids by their bytes.
	if c := bytes.Compare(p.SessionID[:], q.SessionID[:]); c != 0 {
		return c > 0
	}
	return p.Sequence > q.Sequence
}

// String is the position as an opaque cursor, which ParsePosition reads.
func (p Position) String() string {
	return fmt.Sprintf("%d.%s.%d", p.Xid, p.SessionID, p.Sequence)
}

// ParsePosition reads a cursor written by Position.String, and only in
// the spelling it writes (no sign, leading zero or upper-case id), so that
// a cursor has one text. An error quotes at most the cursor's start.
func ParsePosition(s string) (Position, error) {
	bad := fmt.Errorf("cursor %.60q is not one this server wrote: pass a cursor you received unchanged", s)
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Position{}, bad
	}
	xid, errX := strconv.ParseInt(parts[0], 10, 64)
	session, errS := uuid.Parse(parts[1])
	seq, errQ := strconv.ParseInt(parts[2], 10, 64)
	if errX != nil || errS != nil || errQ != nil || xid < 0 || seq < 0 {
		return Position{}, bad
	}
	p := Position{Xid: xid, SessionID: session, Sequence: seq}
	if p.String() != s {
		return Position{}, bad
	}
	return p, nil
}

// Cursor is where a subscription resumes: after a sequence of its session
// (a subscription to one session), after a position in the feed of every
// session (a subscription across sessions), or from now.
type Cursor struct {
	fromNow  bool
	sequence int64
	position Position
}

// FromNow subscribes to events committed after the subscription starts.
var FromNow = Cursor{fromNow: true}

// AfterSequence resumes a subscription to one session after its event
// numbered n (0: from its first event).
func AfterSequence(n int64) Cursor { return Cursor{sequence: n} }

// AfterPosition resumes a subscription across sessions after p.
func AfterPosition(p Position) Cursor { return Cursor{position: p} }

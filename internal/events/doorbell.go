package events

import (
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// NotifyChannel is the PostgreSQL channel the doorbell rings on. Its payload
// is the ringing replica's origin, then ";" and the sessions that have new
// events, comma-separated, or "*" for too many to name ("read the feed");
// either way listeners read the events table.
const NotifyChannel = "sessiongraph_events"

const (
	// ringGap is the least time between two NOTIFYs of one replica: the
	// commits of that span share one.
	ringGap = 5 * time.Millisecond
	// ringSessions is the most sessions one NOTIFY names (a payload must
	// stay under 8,000 bytes); past it, it names none, and other replicas
	// deliver those sessions' events by the feed alone.
	ringSessions = 200
)

// Doorbell tells every replica's hub that events were committed, after the
// commit. A NOTIFY inside the writing transaction would take PostgreSQL's
// notification lock at its commit and hold it through the WAL flush, one
// commit at a time for the whole database; the doorbell instead sends its
// NOTIFY on a connection of its own, once for all the commits of a few
// milliseconds, and wakes this replica's hub at once. A bell that is lost
// (a failed NOTIFY, a listener reconnecting) loses no event: hubs also
// read on a timer, by position.
type Doorbell struct {
	db   *sql.DB
	hub  *Hub
	log  *slog.Logger
	rung chan struct{}

	mu       sync.Mutex
	sessions map[uuid.UUID]struct{} // named by the next NOTIFY
	tooMany  bool
}

// NewDoorbell returns a doorbell that notifies through db and wakes hub.
func NewDoorbell(db *sql.DB, hub *Hub, log *slog.Logger) *Doorbell {
	return &Doorbell{db: db, hub: hub, log: log, rung: make(chan struct{}, 1), sessions: map[uuid.UUID]struct{}{}}
}

// Ring says that events of sessions were committed. It never blocks: rings
// that come while a NOTIFY is on its way are answered by the next one.
func (d *Doorbell) Ring(sessions []uuid.UUID) {
	d.hub.changed(sessions)
	d.mu.Lock()
	for _, id := range sessions {
		if len(d.sessions) == ringSessions {
			d.tooMany = true
			break
		}
		d.sessions[id] = struct{}{}
	}
	d.mu.Unlock()
	select {
	case d.rung <- struct{}{}:
	default:
	}
}

// payload takes the sessions rung since the last NOTIFY.
func (d *Doorbell) payload() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := make([]string, 0, len(d.sessions))
	for id := range d.sessions {
		ids = append(ids, id.String())
	}
	tooMany := d.tooMany
	d.sessions, d.tooMany = map[uuid.UUID]struct{}{}, false
	if tooMany {
		return d.hub.origin + ";" + everySession
	}
	return d.hub.origin + ";" + strings.Join(ids, ",")
}

// everySession stands for more sessions than a bell names.
const everySession = "*"

// Run sends the NOTIFYs until ctx ends.
func (d *Doorbell) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.rung:
		}
		// The NOTIFY is a transaction of its own; losing it to a crash
		// loses nothing, so its commit need not wait for the WAL flush.
		_, err := d.db.ExecContext(ctx, `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`,
			NotifyChannel, d.payload())
		if err != nil && ctx.Err() == nil {
			d.log.Warn("ringing the event doorbell; the other replicas' hubs will find the events by polling", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(ringGap):
		}
	}
}

// RingOnce rings the doorbell once for sessions, from a process that runs
// no hub (the `sessiongraph keys` command): every replica's hub reads those
// sessions at once instead of at its next poll.
func RingOnce(ctx context.Context, db *sql.DB, sessions []uuid.UUID) error {
	ids := make([]string, 0, len(sessions))
	for _, id := range sessions {
		ids = append(ids, id.String())
	}
	list := strings.Join(ids, ",")
	if len(sessions) > ringSessions {
		list = everySession
	}
	// No hub has the empty origin, so every hub answers the bell.
	_, err := db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, ";"+list)
	return err
}

// parseBell reads a NOTIFY's payload: who rang, the sessions it names, and
// whether it named them all (a payload it cannot read names none: the feed
// delivers those events).
func parseBell(payload string) (origin string, sessions []uuid.UUID, named bool) {
	origin, list, ok := strings.Cut(payload, ";")
	if !ok || list == everySession {
		return origin, nil, false
	}
	for _, s := range strings.Split(list, ",") {
		id, err := uuid.Parse(s)
		if err != nil {
			return origin, nil, false
		}
		sessions = append(sessions, id)
	}
	return origin, sessions, true
}

package engine

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/events"
)

// Live serves subscriptions: a session's events, the sessions feed, entity
// changes and the builds a session's changes make.
type Live struct {
	client  *ent.Client
	hub     *events.Hub
	domains *Domains
	builds  *Builds
}

// sessionCursor resumes a subscription to one session after the sequence
// the client received last; none means from now.
func sessionCursor(after *int, newest int64) (events.Cursor, error) {
	if after == nil {
		return events.FromNow, nil
	}
	if *after < 0 {
		return events.Cursor{}, apperr.New(apperr.InvalidCursor,
			"after is %d; pass the sequence of the last event you received (0 for the session's first event), or omit it for new events only", *after)
	}
	// No client received an event the session has not had: such a cursor
	// would wait, silently, until the session caught up with it.
	if int64(*after) > newest {
		return events.Cursor{}, apperr.New(apperr.InvalidCursor,
			"after is %d, but the session's newest event is %d; pass the sequence of the last event you received", *after, newest)
	}
	return events.AfterSequence(int64(*after)), nil
}

// feedCursor resumes a subscription across sessions after the cursor the
// client received last; none means from now, and the empty cursor from the
// first event.
func feedCursor(after *string) (events.Cursor, error) {
	switch {
	case after == nil:
		return events.FromNow, nil
	case *after == "":
		return events.AfterPosition(events.Position{}), nil
	}
	p, err := events.ParsePosition(*after)
	if err != nil {
		return events.Cursor{}, apperr.New(apperr.InvalidCursor, "%v", err)
	}
	return events.AfterPosition(p), nil
}

// liveSession checks that a session exists before a subscription starts.
func (lv *Live) liveSession(ctx context.Context, id uuid.UUID) (*ent.Session, error) {
	if lv.hub == nil {
		return nil, apperr.New(apperr.Internal, "subscriptions are not running on this server")
	}
	return sessionByID(ctx, lv.client, id)
}

// SessionEvents streams a session's events after a cursor, then live.
func (lv *Live) SessionEvents(ctx context.Context, sessionID uuid.UUID, after *int) (events.Source, error) {
	s, err := lv.liveSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return lv.sessionSource(ctx, s, after)
}

// sessionSource streams s's events after a cursor, then live.
func (lv *Live) sessionSource(ctx context.Context, s *ent.Session, after *int) (events.Source, error) {
	c, err := sessionCursor(after, s.EventSequence)
	if err != nil {
		return nil, err
	}
	return lv.hub.Source(ctx, events.Filter{SessionID: &s.ID}, c), nil
}

// MaxFeedKinds caps the kinds one subscription may name: more than there
// are is a mistake, and each is checked against every event it is sent.
const MaxFeedKinds = 32

// feedKinds is the filter for the kinds a subscriber asked for: none (nil)
// means the lifecycle kinds, as before kinds could be chosen. FeedKinds and
// sessionKinds are generated from the table of event kinds
// (internal/eventkind/kinds.txt).
func feedKinds(kinds []string) (map[string]bool, error) {
	if kinds == nil {
		return sessionKinds, nil
	}
	if len(kinds) == 0 { // a feed that could never deliver is a mistake
		return nil, apperr.New(apperr.BadUserInput, "kinds is empty: name the kinds you want, or omit kinds for the lifecycle kinds")
	}
	if len(kinds) > MaxFeedKinds {
		return nil, apperr.New(apperr.BadUserInput, "kinds has %d entries; at most %d may be given", len(kinds), MaxFeedKinds)
	}
	out := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		if !slices.Contains(FeedKinds, k) {
			return nil, apperr.New(apperr.BadUserInput, "kinds: %.60q is not a kind of session event; the known kinds are %s",
				k, strings.Join(FeedKinds, ", "))
		}
		out[k] = true
	}
	return out, nil
}

// SessionsChanged streams events of every session the key may see (every
// tenant's for an admin, its own tenant's otherwise): the lifecycle kinds,
// or the kinds asked for.
func (lv *Live) SessionsChanged(ctx context.Context, after *string, kinds []string) (events.Source, error) {
	if lv.hub == nil {
		return nil, apperr.New(apperr.Internal, "subscriptions are not running on this server")
	}
	tenant, err := access.TenantScope(ctx)
	if err != nil {
		return nil, err
	}
	c, err := feedCursor(after)
	if err != nil {
		return nil, err
	}
	wanted, err := feedKinds(kinds)
	if err != nil {
		return nil, err
	}
	f := events.Filter{Kinds: wanted}
	if tenant != "" {
		f.Tenant = &tenant
	}
	return lv.hub.Source(ctx, f, c), nil
}

// SessionsChangedCursor is the position of the feed of every session now:
// sessionsChanged resumed after it delivers every change committed from now
// on, however late it starts.
func (lv *Live) SessionsChangedCursor(ctx context.Context) (string, error) {
	if lv.hub == nil {
		return "", apperr.New(apperr.Internal, "subscriptions are not running on this server")
	}
	if _, err := access.TenantScope(ctx); err != nil {
		return "", err
	}
	now, err := lv.hub.Now(ctx)
	if err != nil {
		return "", err
	}
	return now.String(), nil
}

// EntityChange is one ref or artifact change carried by an event.
type EntityChange struct {
	Sequence   int64
	Kind       string
	Ref        string
	EntityType string
	Action     string
}

// EntityChanges streams a session's events; EntityChangesOf splits each
// into its ref and artifact changes.
func (lv *Live) EntityChanges(ctx context.Context, sessionID uuid.UUID, entityTypes []string, after *int) (events.Source, error) {
	s, err := lv.liveSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if len(entityTypes) > 0 {
		// A type the session's domain does not have would match nothing,
		// silently, for as long as the subscription lasts.
		d, err := lv.domains.Domain(ctx, s.Domain)
		if err != nil {
			return nil, err
		}
		for _, name := range entityTypes {
			if _, err := d.Type(name); err != nil {
				return nil, err
			}
		}
	}
	return lv.sessionSource(ctx, s, after)
}

// EntityChangesOf lists the ref and artifact changes an event carries, of
// the given entity types (all when none are given).
func EntityChangesOf(ev *events.Event, types []string) []*EntityChange {
	var out []*EntityChange
	list, _ := ev.Payload["changes"].([]any)
	for _, item := range list {
		c, _ := item.(map[string]any)
		ch := &EntityChange{Sequence: ev.Sequence, Kind: ev.Kind}
		ch.Ref, _ = c["ref"].(string)
		ch.EntityType, _ = c["entityType"].(string)
		ch.Action, _ = c["action"].(string)
		if len(types) == 0 || slices.Contains(types, ch.EntityType) {
			out = append(out, ch)
		}
	}
	if ref, ok := ev.Payload["ref"].(string); ok && len(list) == 0 && len(types) == 0 { // retained, released
		out = append(out, &EntityChange{Sequence: ev.Sequence, Kind: ev.Kind, Ref: ref})
	}
	return out
}

// ContextUpdated streams a fresh build of a node's context now and after
// each change; changes that arrive while a build runs give one build.
func (lv *Live) ContextUpdated(ctx context.Context, sessionID uuid.UUID, node contextbuild.Node, opts *ContextOptions) (<-chan *ContextBuild, error) {
	s, err := lv.liveSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	// Options no build can use are the subscriber's error, with its code,
	// before the subscription starts: later they could only end it, and be
	// logged as the server's.
	if opts == nil {
		opts = &ContextOptions{}
	}
	if _, _, err := contextOptions(s, opts); err != nil {
		return nil, err
	}
	// Events from the session's state as read here, not from the hub's
	// "now": the hub learns where now is on its next poll, and a write
	// between this read and that poll would never rebuild (seen under load).
	st := lv.hub.Subscribe(ctx, events.Filter{SessionID: &sessionID}, events.AfterSequence(s.EventSequence))
	out := make(chan *ContextBuild, 1)
	go func() {
		defer close(out)
		for {
			s, err := sessionByID(ctx, lv.client, sessionID)
			if err != nil {
				return
			}
			built := s.EventSequence // the events this build already shows
			// A build watched live is not a prompt sent: never recorded
			// (Config.RecordContexts is for the runtime's reads).
			b, err := lv.builds.context(ctx, s, node, opts)
			if err != nil {
				if ctx.Err() == nil { // else the subscriber left: nothing went wrong
					slog.WarnContext(ctx, "context build for a subscription", "error", err)
				}
				return
			}
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
			for changed := false; !changed; { // an event past what the build shows
				ev, ok := <-st.C
				if !ok {
					return
				}
				changed = ev.Sequence > built
			}
			for drained := false; !drained; { // coalesce a burst into one build
				select {
				case _, ok := <-st.C:
					if !ok {
						return
					}
				default:
					drained = true
				}
			}
		}
	}()
	return out, nil
}

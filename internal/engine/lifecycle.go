package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/apperr"
)

// reaperLock is the key of the transaction-scoped advisory lock that lets
// one replica at a time run the expiry reaper.
const reaperLock = 0x5e5510_0002

// maxRetentionSeconds bounds purgeExpired's olderThanSeconds (ten years).
const maxRetentionSeconds = 10 * 365 * 24 * 60 * 60

// ExpireSession expires one session now; expiring an expired session
// changes nothing.
func (ss *Sessions) ExpireSession(ctx context.Context, id uuid.UUID) (*ent.Session, error) {
	if _, err := ss.Session(ctx, id); err != nil {
		return nil, err
	}
	if _, err := ss.store.ExpireWhere(ctx, "admin", session.ID(id)); err != nil {
		return nil, err
	}
	return ss.Session(ctx, id)
}

// ExpireSessions expires every live session matching where, in a fixed
// number of statements, and returns how many it expired.
func (ss *Sessions) ExpireSessions(ctx context.Context, where *ent.SessionWhereInput) (int, error) {
	if where == nil {
		return 0, apperr.Invalid("where", "give a where: expiring every session takes an explicit {}")
	}
	where = MatchEverythingWhenEmpty(where).(*ent.SessionWhereInput)
	p, err := where.P()
	if err != nil {
		return 0, apperr.Invalid("where", "%v", err)
	}
	ids, err := ss.store.ExpireWhere(ctx, "admin", p)
	return len(ids), err
}

// DeleteSession deletes a session with all its rows.
func (ss *Sessions) DeleteSession(ctx context.Context, id uuid.UUID) error {
	if _, err := ss.Session(ctx, id); err != nil {
		return err
	}
	ids, err := ss.store.DeleteWhere(ctx, "admin", session.ID(id))
	if err == nil && len(ids) == 0 {
		return apperr.New(apperr.NotFound, "session %s not found: another request deleted it", id)
	}
	return err
}

// PurgeExpired deletes the sessions that expired more than olderThanSeconds
// ago (nil: the configured retention), with all their rows, and returns how
// many.
func (ss *Sessions) PurgeExpired(ctx context.Context, olderThanSeconds *int) (int, error) {
	olderThan := ss.cfg.Retention
	if olderThanSeconds != nil {
		// Checked as seconds before the multiplication, which would overflow.
		if *olderThanSeconds < 0 || *olderThanSeconds > maxRetentionSeconds {
			return 0, apperr.Invalid("olderThanSeconds", "olderThanSeconds must be between 0 and %d (ten years), got %d", maxRetentionSeconds, *olderThanSeconds)
		}
		olderThan = time.Duration(*olderThanSeconds) * time.Second
	}
	ids, err := ss.store.DeleteWhere(ctx, "retention",
		session.StatusEQ(session.StatusExpired), session.ExpiredAtLTE(time.Now().Add(-olderThan)))
	return len(ids), err
}

// Reaped is what one round of the reaper did.
type Reaped struct {
	// Ran is false when another replica held the reaper lock.
	Ran             bool
	Expired, Purged int
	// TextsCleared counts receipts whose text outlived
	// Config.ReceiptTextRetention.
	TextsCleared int
}

// ReapOnce expires the sessions whose TTL has run out, purges those
// expired longer ago than retention and clears receipt texts past theirs, on one replica at a time: it holds a
// transaction-scoped advisory lock for the whole round, and a replica that
// cannot take it skips the round.
func (ss *Sessions) ReapOnce(ctx context.Context) (Reaped, error) {
	tx, err := ss.client.Tx(ctx)
	if err != nil {
		return Reaped{}, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT pg_try_advisory_xact_lock($1)`, reaperLock)
	if err != nil {
		return Reaped{}, err
	}
	var got bool
	if rows.Next() {
		err = rows.Scan(&got)
	}
	rows.Close()
	if err != nil || !got {
		return Reaped{}, err
	}
	r := Reaped{Ran: true}
	expired, err := ss.store.ExpireWhere(ctx, "ttl", session.ExpiresAtLTE(time.Now()))
	if err != nil {
		return r, fmt.Errorf("expiring idle sessions: %w", err)
	}
	r.Expired = len(expired)
	if r.Purged, err = ss.PurgeExpired(ctx, nil); err != nil {
		return r, fmt.Errorf("purging expired sessions: %w", err)
	}
	if r.TextsCleared, err = ss.receipts.TextRetentionEnds(ctx); err != nil {
		return r, fmt.Errorf("clearing receipt texts past their retention: %w", err)
	}
	return r, tx.Commit()
}

// RunReaper reaps every ReapInterval until ctx ends.
func (ss *Sessions) RunReaper(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(ss.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r, err := ss.ReapOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("reaper", "error", err)
		case r.Expired+r.Purged+r.TextsCleared > 0:
			log.Info("reaper", "expired", r.Expired, "purged", r.Purged, "receipt_texts_cleared", r.TextsCleared)
		}
	}
}

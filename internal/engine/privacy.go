package engine

import (
	"context"

	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// ReasonPrivacy is the reason of the session.deleted events of a user's
// data deleted on request.
const ReasonPrivacy = "privacy"

// DeleteUserData deletes every session a tenant's user left, live or
// expired, with all their rows (turns, refs, artifacts, step results,
// receipts, events), through the store's one deletion, for a privacy
// request; it returns how many sessions went. Each deleted session leaves
// only its session.deleted event, which carries its id and the reason,
// nothing of the user. Other users and tenants are untouched. ADMIN only.
func (ss *Sessions) DeleteUserData(ctx context.Context, tenant, userID string) (int, error) {
	if err := access.RequireAdmin(ctx, "deleting a user's data"); err != nil {
		return 0, err
	}
	if err := requireText("tenant", tenant, access.MaxNameBytes); err != nil {
		return 0, err
	}
	if userID == "" {
		return 0, apperr.Invalid("userID", "give the userID whose sessions to delete")
	}
	ids, err := ss.store.DeleteWhere(ctx, ReasonPrivacy, session.Tenant(tenant), session.UserID(userID))
	return len(ids), err
}

package access

import (
	"context"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/event"
	"sessiongraph/ent/intercept"
	"sessiongraph/ent/modelcall"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/session"
	"sessiongraph/ent/stepresult"
	"sessiongraph/ent/turn"
	"sessiongraph/ent/turnitem"
)

// Confine makes every query of client keep to the tenant of the request's key:
// sessions by their tenant, turns, refs, artifacts, step results, context receipts and model calls by their
// session's, events by the tenant they carry. API keys are visible to admins; any
// other key sees only itself. Entity types are shared by every tenant.
//
// Because the interceptors sit under every query (connections, edges, node and nodes,
// and the session lock that starts every write), an object of another
// tenant is "not found" on every path without each resolver checking.
func Confine(client *ent.Client) {
	client.Session.Intercept(intercept.TraverseSession(func(ctx context.Context, q *ent.SessionQuery) error {
		return scoped(ctx, func(t string) { q.Where(session.Tenant(t)) })
	}))
	client.Turn.Intercept(intercept.TraverseTurn(func(ctx context.Context, q *ent.TurnQuery) error {
		return scoped(ctx, func(t string) { q.Where(turn.HasSessionWith(session.Tenant(t))) })
	}))
	client.Ref.Intercept(intercept.TraverseRef(func(ctx context.Context, q *ent.RefQuery) error {
		return scoped(ctx, func(t string) { q.Where(ref.HasSessionWith(session.Tenant(t))) })
	}))
	client.Artifact.Intercept(intercept.TraverseArtifact(func(ctx context.Context, q *ent.ArtifactQuery) error {
		return scoped(ctx, func(t string) { q.Where(artifact.HasSessionWith(session.Tenant(t))) })
	}))
	client.StepResult.Intercept(intercept.TraverseStepResult(func(ctx context.Context, q *ent.StepResultQuery) error {
		return scoped(ctx, func(t string) { q.Where(stepresult.HasSessionWith(session.Tenant(t))) })
	}))
	client.ContextReceipt.Intercept(intercept.TraverseContextReceipt(func(ctx context.Context, q *ent.ContextReceiptQuery) error {
		return scoped(ctx, func(t string) { q.Where(contextreceipt.HasSessionWith(session.Tenant(t))) })
	}))
	client.ModelCall.Intercept(intercept.TraverseModelCall(func(ctx context.Context, q *ent.ModelCallQuery) error {
		return scoped(ctx, func(t string) { q.Where(modelcall.HasSessionWith(session.Tenant(t))) })
	}))
	client.TurnItem.Intercept(intercept.TraverseTurnItem(func(ctx context.Context, q *ent.TurnItemQuery) error {
		return scoped(ctx, func(t string) { q.Where(turnitem.HasSessionWith(session.Tenant(t))) })
	}))
	client.Event.Intercept(intercept.TraverseEvent(func(ctx context.Context, q *ent.EventQuery) error {
		return scoped(ctx, func(t string) { q.Where(event.Tenant(t)) })
	}))
	client.APIKey.Intercept(intercept.TraverseAPIKey(func(ctx context.Context, q *ent.APIKeyQuery) error {
		return scoped(ctx, func(string) {
			p, _ := FromContext(ctx)
			q.Where(apikey.ID(p.KeyID))
		})
	}))
}

// scoped applies confine with the tenant ctx is confined to, if any.
func scoped(ctx context.Context, confine func(tenant string)) error {
	tenant, err := TenantScope(ctx)
	if err != nil {
		return err
	}
	if tenant != "" {
		confine(tenant)
	}
	return nil
}

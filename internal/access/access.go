// Package access decides who may see and change what. A request carries a
// Principal, resolved from its API key; ent interceptors confine every query
// of a tenant's key to that tenant, so another tenant's object is simply not
// found. Work the server does on its own behalf (the reaper, start-up) runs
// with the System context instead; a context with neither is refused, so a
// path that forgot to authenticate fails closed.
package access

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent/apikey"
	"sessiongraph/internal/apperr"
)

// Principal is the holder of an API key.
type Principal struct {
	KeyID uuid.UUID
	Name  string
	Role  apikey.Role
	// Tenant is empty for admin keys, which see every tenant.
	Tenant string
}

// IsAdmin reports whether the principal sees every tenant.
func (p *Principal) IsAdmin() bool { return p.Role == apikey.RoleAdmin }

// CanWrite reports whether the principal may run mutations.
func (p *Principal) CanWrite() bool { return p.Role != apikey.RoleReader }

type principalKey struct{}
type systemKey struct{}

// WithPrincipal returns ctx acting for p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx acts for, if any.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}

// System returns ctx acting for the server itself, across every tenant.
// Only the server's own work uses it: never a client's request.
func System(ctx context.Context) context.Context {
	return context.WithValue(ctx, systemKey{}, true)
}

func isSystem(ctx context.Context) bool {
	v, _ := ctx.Value(systemKey{}).(bool)
	return v
}

// TenantScope returns the tenant ctx is confined to, or "" when it may see
// every tenant (an admin key or the system). A context that is neither
// authenticated nor the system's gets UNAUTHENTICATED.
func TenantScope(ctx context.Context) (string, error) {
	if p, ok := FromContext(ctx); ok {
		if p.IsAdmin() {
			return "", nil
		}
		return p.Tenant, nil
	}
	if isSystem(ctx) {
		return "", nil
	}
	return "", ErrUnauthenticated
}

// keyHeader is how a request over HTTP sends its key.
const keyHeader = "this request needs an API key: send the header 'Authorization: Bearer <key>'"

// ErrUnauthenticated is the answer to a request without a valid key, on
// the API that also takes WebSockets (GraphQL's).
var ErrUnauthenticated = apperr.New(apperr.Unauthenticated,
	keyHeader+" (or, on a WebSocket, the connection_init payload {\"Authorization\": \"Bearer <key>\"})")

// ErrNoKeyHeader is the answer to a request without a valid key where
// only the header carries one (MCP, metrics).
var ErrNoKeyHeader = apperr.New(apperr.Unauthenticated, keyHeader)

// RequireAdmin refuses anyone but an admin key (or the system).
func RequireAdmin(ctx context.Context, what string) error {
	if isSystem(ctx) {
		return nil
	}
	p, ok := FromContext(ctx)
	if !ok {
		return ErrUnauthenticated
	}
	if !p.IsAdmin() {
		return apperr.New(apperr.Forbidden, "%s needs an ADMIN key; this key is %s", what, p.Role)
	}
	return nil
}

// RequireTenant refuses a key of another tenant than tenant. It is for
// operations that name a tenant rather than an object of one, such as
// openSession; objects of another tenant are simply not found.
func RequireTenant(ctx context.Context, tenant string) error {
	scope, err := TenantScope(ctx)
	if err != nil {
		return err
	}
	if scope != "" && scope != tenant {
		return apperr.New(apperr.Forbidden, "this key belongs to tenant %q and cannot act in tenant %q", scope, tenant)
	}
	return nil
}

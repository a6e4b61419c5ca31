package app

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"sessiongraph/ent/apikey"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// authenticate resolves the request's bearer key to the principal its
// operations act for, and reports whether the request goes on. A request
// without a valid key gets 401 before anything runs, with two exceptions
// that carry no data: CORS preflights, and, where the route takes them
// (sockets), WebSocket upgrades, which browsers cannot give headers and
// which authenticate in connection_init instead.
func (a *App) authenticate(w http.ResponseWriter, r *http.Request, sockets bool) (*http.Request, bool) {
	key, ok := access.BearerKey(r.Header.Get("Authorization"))
	if !ok {
		if r.Method == http.MethodOptions || sockets && isWebSocket(r) {
			return r, true
		}
		missing := access.ErrNoKeyHeader
		if sockets {
			missing = access.ErrUnauthenticated
		}
		challenge(w, "")
		writeError(w, http.StatusUnauthorized, apperr.Unauthenticated, missing.Message)
		return r, false
	}
	p, err := a.Keys.Authenticate(r.Context(), key)
	if err != nil {
		status, code := http.StatusUnauthorized, apperr.CodeOf(err)
		if code == apperr.Unavailable {
			w.Header().Set("Retry-After", strconv.Itoa(apperr.RetryAfterSeconds))
			status = http.StatusServiceUnavailable
		}
		if code == "" {
			a.log.ErrorContext(r.Context(), "authentication failed", "error", err)
			status, code = http.StatusServiceUnavailable, apperr.Internal
		}
		if status == http.StatusUnauthorized {
			challenge(w, "invalid_token")
		}
		writeError(w, status, code, messageOf(err))
		return r, false
	}
	return r.WithContext(access.WithPrincipal(r.Context(), p)), true
}

// realm is the protection space a 401 names: every route of the server
// takes the same keys.
const realm = "sessiongraph"

// challenge says, on a 401, how to authenticate (RFC 6750): with a bearer
// key, and why the one sent was refused ("invalid_token"), if one was.
func challenge(w http.ResponseWriter, refusal string) {
	c := `Bearer realm="` + realm + `"`
	if refusal != "" {
		c += `, error="` + refusal + `"`
	}
	w.Header().Set("WWW-Authenticate", c)
}

func messageOf(err error) string {
	if ae := (*apperr.Error)(nil); errors.As(err, &ae) {
		return ae.Message
	}
	return "the API key could not be checked right now; try again"
}

// CreateAPIKey creates a key with role ADMIN, CLIENT or READER (tenant empty
// for ADMIN) and returns it; only its hash is stored.
func (a *App) CreateAPIKey(ctx context.Context, name, role, tenant string) (string, error) {
	key, _, err := access.CreateKey(access.System(ctx), a.Client.APIKey,
		access.NewKey{Name: name, Role: apikey.Role(role), Tenant: tenant})
	return key, err
}

// EnsureAdminKey creates the first admin key when no usable admin key
// exists, and returns it ("" when one existed).
func (a *App) EnsureAdminKey(ctx context.Context) (string, error) {
	return access.EnsureAdminKey(ctx, a.Client)
}

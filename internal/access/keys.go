package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/apperr"
)

// keyPrefix starts every key, so a leaked key is easy to recognise (secret
// scanners match on it).
const keyPrefix = "sg_"

// newKey returns a fresh key: 32 random bytes, enough that a fast hash is a
// safe way to store it (there is nothing to brute-force, unlike a password).
func newKey() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return keyPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// NewKey describes a key to create.
type NewKey struct {
	Name string
	Role apikey.Role
	// Tenant is required for CLIENT and READER keys and must be empty for
	// ADMIN keys.
	Tenant string
}

// CreateKey stores a new key and returns it with its row. The key itself is
// never stored; this is the only time anyone sees it.
func CreateKey(ctx context.Context, keys *ent.APIKeyClient, in NewKey) (string, *ent.APIKey, error) {
	in.Name = strings.TrimSpace(in.Name)
	in.Tenant = strings.TrimSpace(in.Tenant)
	if in.Name == "" {
		return "", nil, apperr.Invalid("name", "name the key, so that it can be told apart and revoked later")
	}
	if err := CheckName("name", in.Name); err != nil {
		return "", nil, err
	}
	if in.Tenant != "" {
		if err := CheckName("tenant", in.Tenant); err != nil {
			return "", nil, err
		}
	}
	if err := apikey.RoleValidator(in.Role); err != nil {
		return "", nil, apperr.Invalid("role", "role must be ADMIN, CLIENT or READER")
	}
	switch {
	case in.Role == apikey.RoleAdmin && in.Tenant != "":
		return "", nil, apperr.Invalid("tenant", "an ADMIN key sees every tenant: leave tenant empty")
	case in.Role != apikey.RoleAdmin && in.Tenant == "":
		return "", nil, apperr.Invalid("tenant", "a %s key belongs to one tenant: give tenant", in.Role)
	}
	key := newKey()
	row, err := keys.Create().
		SetName(in.Name).
		SetRole(in.Role).
		SetTenant(in.Tenant).
		SetHash(hashKey(key)).
		SetPrefix(key[:len(keyPrefix)+6]).
		Save(ctx)
	if err != nil {
		return "", nil, err
	}
	return key, row, nil
}

// BearerKey extracts the key from an Authorization value ("Bearer <key>");
// ok is false when there is none.
func BearerKey(authorization string) (string, bool) {
	scheme, key, found := strings.Cut(strings.TrimSpace(authorization), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	key = strings.TrimSpace(key)
	return key, key != ""
}

// bootstrapLock serialises EnsureAdminKey across replicas starting at once.
const bootstrapLock = 0x5347_4b45_5901 // "SGKEY", arbitrary but fixed

// EnsureAdminKey creates an admin key when no usable one exists, so that a
// new installation can be reached at all, and returns it ("" when one
// already existed). Replicas starting together create one key between them.
func EnsureAdminKey(ctx context.Context, client *ent.Client) (string, error) {
	ctx = System(ctx)
	tx, err := client.Tx(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", bootstrapLock); err != nil {
		return "", fmt.Errorf("bootstrap lock: %w", err)
	}
	exists, err := tx.APIKey.Query().Where(apikey.RoleEQ(apikey.RoleAdmin), apikey.RevokedAtIsNil()).Exist(ctx)
	if err != nil || exists {
		return "", err
	}
	key, _, err := CreateKey(ctx, tx.APIKey, NewKey{Name: "first admin key", Role: apikey.RoleAdmin})
	if err != nil {
		return "", err
	}
	return key, tx.Commit()
}

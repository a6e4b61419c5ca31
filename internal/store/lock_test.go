package store_test

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// sameSession fails unless every exported field of got equals ent's (a
// field added to the schema later fails here until the typed lock reads
// it).
func sameSession(t *testing.T, want, got *ent.Session) {
	t.Helper()
	require.NotNil(t, got)
	w, g := reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem()
	compared := 0
	for i := 0; i < w.NumField(); i++ {
		f := w.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		compared++
		assert.True(t, reflect.DeepEqual(w.Field(i).Interface(), g.Field(i).Interface()),
			"field %s: ent read %#v, the typed lock %#v", f.Name, w.Field(i).Interface(), g.Field(i).Interface())
	}
	assert.Equal(t, len(session.Columns)+1, compared, "every column's field and the edges")
}

// bothReads locks session id the store's way and ent's way, each in a
// transaction of its own on client, and returns both rows (or errors).
func bothReads(ctx context.Context, t *testing.T, st *store.Store, client *ent.Client, id uuid.UUID) (want, got *ent.Session, entErr, typedErr error) {
	t.Helper()
	tx, err := client.Tx(ctx)
	require.NoError(t, err)
	got, typedErr = store.Lock(st, ctx, tx, id)
	require.NoError(t, tx.Rollback())
	tx, err = client.Tx(ctx)
	require.NoError(t, err)
	want, entErr = tx.Session.Query().Where(session.ID(id)).ForUpdate().Only(ctx)
	require.NoError(t, tx.Rollback())
	return want, got, entErr, typedErr
}

// Begin locks the session with a statement of its own scanned into typed
// fields: the row it gives equals ent's read of the same row, field by
// field, for sessions with every field set in varied ways: defaults,
// NULL and JSON null, empty and nested JSON, summaries, a pending
// clarification, TTLs, tokenizers, counters after writes, an expired
// session with its expiry time in another time zone.
func TestTypedLockReadsAsEnt(t *testing.T) {
	ctx := context.Background()
	st, client, _ := newStore(t)

	plain := openOne(t, st, "plain") // the defaults: NULL focus and clarification, empty maps

	full, err := st.Open(ctx, "acme", "full", func(c *ent.SessionCreate) {
		c.SetDomain("kitchen").SetTTLSeconds(86400).SetUserID("user-7").SetSystemPrompt("You are terse.\nÜnïcode ✓").
			SetTokenizer("o200k_base").SetMetadata(map[string]string{"channel": "web", "": "empty key", "quote": `"`}).
			SetFocus(&schematype.Focus{Type: "Order", ID: new("ord_3"), Context: map[string]any{"n": 3.5, "tags": []any{"a", nil, true}}}).
			SetPendingClarification(map[string]any{"question": "Which order?", "options": []any{"ord_1", float64(2)},
				"nested": map[string]any{"deep": map[string]any{}}, "none": nil})
	})
	require.NoError(t, err)
	// Writes that change the counters, the turn, the summaries.
	for i := 1; i <= 3; i++ {
		w, err := st.Begin(ctx, full.Session.ID)
		require.NoError(t, err)
		w.Update().SetRefCounters(map[string]int{"order": i, "customer": 2 * i}).SetGenCounters(map[string]int{"note": i}).
			SetCurrentTurn(i).SetTokenCount(100 * i).SetFailedTurns(i - 1).
			SetEngagementSummary("engaged").SetHistorySummary("history " + string(rune('a'+i))).SetReasoningSummary("why")
		_, err = w.Commit(ctx, store.Record(store.Event{Kind: "test.wrote"}))
		require.NoError(t, err)
	}

	emptyJSON := openOne(t, st, "empty-json")
	require.NoError(t, client.Session.UpdateOneID(emptyJSON.ID).SetPendingClarification(map[string]any{}).
		SetFocus(&schematype.Focus{}).SetTokenizer("chars4").SetTTLSeconds(1).Exec(ctx))

	jsonNull := openOne(t, st, "json-null")
	_, err = client.ExecContext(ctx, `UPDATE sessions SET focus = 'null', pending_clarification = 'null', metadata = 'null' WHERE id = $1`, jsonNull.ID)
	require.NoError(t, err)

	expired := openOne(t, st, "expired")
	tokyo := time.FixedZone("JST", 9*3600)
	require.NoError(t, client.Session.UpdateOneID(expired.ID).SetStatus(session.StatusExpired).
		SetExpiredAt(time.Date(2026, 11, 26, 12, 0, 0, 123456000, tokyo)).
		SetExpiresAt(time.Date(2026, 11, 26, 11, 0, 0, 1000, tokyo)).Exec(ctx))

	other, err := st.Open(ctx, "globex", "other", func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(60) })
	require.NoError(t, err)

	for name, id := range map[string]uuid.UUID{"plain": plain.ID, "full": full.Session.ID, "empty JSON": emptyJSON.ID,
		"JSON null": jsonNull.ID, "expired": expired.ID, "another tenant": other.Session.ID} {
		t.Run(name, func(t *testing.T) {
			want, got, entErr, typedErr := bothReads(ctx, t, st, client, id)
			require.NoError(t, entErr)
			require.NoError(t, typedErr)
			sameSession(t, want, got)
		})
	}
	// The cases above are what they say.
	_, got, _, _ := bothReads(ctx, t, st, client, full.Session.ID)
	assert.Equal(t, map[string]int{"order": 3, "customer": 6}, got.RefCounters)
	assert.Equal(t, "Which order?", got.PendingClarification["question"])
	assert.Equal(t, 2, got.FailedTurns)
	_, got, _, _ = bothReads(ctx, t, st, client, jsonNull.ID)
	assert.Nil(t, got.Focus)
	assert.Nil(t, got.Metadata)
	_, got, _, _ = bothReads(ctx, t, st, client, plain.ID)
	assert.Nil(t, got.ExpiredAt)
	assert.Equal(t, map[string]int{}, got.RefCounters)
	_, got, _, _ = bothReads(ctx, t, st, client, expired.ID)
	require.NotNil(t, got.ExpiredAt)
	assert.True(t, got.ExpiredAt.Equal(time.Date(2026, 11, 26, 12, 0, 0, 123456000, tokyo)))

	// A missing session is ent's not-found, which Begin answers NOT_FOUND;
	// an expired one SESSION_EXPIRED.
	_, _, entErr, typedErr := bothReads(ctx, t, st, client, uuid.New())
	assert.True(t, ent.IsNotFound(entErr))
	assert.True(t, ent.IsNotFound(typedErr))
	_, err = st.Begin(ctx, uuid.New())
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	_, err = st.Begin(ctx, expired.ID)
	assert.Equal(t, apperr.SessionExpired, apperr.CodeOf(err))
}

// Begin's statement holds the session's row lock until the write ends: a
// second lock of the row cannot be had meanwhile, and can after.
func TestTypedLockHoldsTheRowLock(t *testing.T) {
	ctx := context.Background()
	st, _, dsn := newStore(t)
	s := openOne(t, st, "locked")
	w, err := st.Begin(ctx, s.ID)
	require.NoError(t, err)

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	tryLock := func() error {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer tx.Rollback() //nolint:errcheck // a read-only probe
		_, err = tx.ExecContext(ctx, `SELECT id FROM sessions WHERE id = $1 FOR UPDATE NOWAIT`, s.ID)
		return err
	}
	var pgErr *pgconn.PgError
	require.True(t, errors.As(tryLock(), &pgErr), "the row is locked")
	assert.Equal(t, "55P03", pgErr.Code, "lock_not_available")
	_, err = w.Commit(ctx, store.Record(store.Event{Kind: "test.wrote"}))
	require.NoError(t, err)
	assert.NoError(t, tryLock())
}

// On a client confined by access.Confine, a store told so (ConfinedBy)
// confines its typed lock to the caller's tenant as ent's interceptor
// confines ent's query: the caller's session reads as ent reads it,
// another tenant's is not found, an admin and the system see every
// tenant, an unauthenticated caller is refused alike. A store not told so
// locks through ent's query.
func TestTypedLockKeepsToTheCallersTenant(t *testing.T) {
	ctx := context.Background()
	st, _, dsn := newStore(t)
	mine := openOne(t, st, "mine") // tenant acme
	theirs, err := st.Open(ctx, "globex", "theirs", func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(60) })
	require.NoError(t, err)

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	confined := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	t.Cleanup(func() { confined.Close() })
	access.Confine(confined)
	// On a write's connection, ent is confined as the client is.
	onConn := store.OnConnection(func(d dialect.Driver) *ent.Client {
		c := ent.NewClient(ent.Driver(d))
		access.Confine(c)
		return c
	})
	typed := store.New(confined, db, onConn, store.ConfinedBy(access.TenantScope))
	viaEnt := store.New(confined, db, onConn)

	acme := access.WithPrincipal(ctx, &access.Principal{KeyID: uuid.New(), Role: apikey.RoleClient, Tenant: "acme"})
	admin := access.WithPrincipal(ctx, &access.Principal{KeyID: uuid.New(), Role: apikey.RoleAdmin})
	system := access.System(ctx)

	for _, c := range []struct {
		name  string
		ctx   context.Context
		id    uuid.UUID
		found bool
	}{
		{"acme's own", acme, mine.ID, true},
		{"acme, another tenant's", acme, theirs.Session.ID, false},
		{"admin", admin, theirs.Session.ID, true},
		{"system", system, theirs.Session.ID, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, got, entErr, typedErr := bothReads(c.ctx, t, typed, confined, c.id)
			if !c.found {
				assert.True(t, ent.IsNotFound(entErr))
				assert.True(t, ent.IsNotFound(typedErr))
				_, err := typed.Begin(c.ctx, c.id)
				assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
				return
			}
			require.NoError(t, entErr)
			require.NoError(t, typedErr)
			sameSession(t, want, got)
			_, viaEntRow, _, err := bothReads(c.ctx, t, viaEnt, confined, c.id)
			require.NoError(t, err)
			sameSession(t, want, viaEntRow)
		})
	}
	_, _, entErr, typedErr := bothReads(ctx, t, typed, confined, mine.ID)
	require.Error(t, entErr)
	assert.Equal(t, apperr.Unauthenticated, apperr.CodeOf(entErr))
	assert.Equal(t, apperr.Unauthenticated, apperr.CodeOf(typedErr))
}

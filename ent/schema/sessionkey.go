package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"github.com/google/uuid"
)

// SessionKey names the session of a tenant's external key: the live one,
// or the newest one if none is live. It is what keeps get-or-create exact
// (one live session per key) without a unique index on sessions other than
// its id, so that sessions can be distributed by id (docs/scale-out.md).
// Its id is derived from the tenant and the key (store.KeyID: the MD5 of
// tenant, NUL, key), so the primary key is the uniqueness of the key and a
// key's row is found without an index of its own.
type SessionKey struct {
	ent.Schema
}

// Fields of the SessionKey.
func (SessionKey) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Immutable(),
		field.String("tenant").NotEmpty().MaxLen(200).Immutable(),
		field.String("external_key").NotEmpty().MaxLen(500).Immutable(),
		field.UUID("session_id", uuid.UUID{}).
			Comment("The key's live session, or its newest; no foreign key: on Citus the two rows live on different shards."),
	}
}

// Annotations of the SessionKey.
func (SessionKey) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(entgql.SkipAll),
	}
}

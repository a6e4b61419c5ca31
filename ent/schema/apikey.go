package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"github.com/google/uuid"
)

// APIKey grants a role, within a tenant unless it is an admin key. Only a
// hash of the key is stored; the key itself is shown once, when created.
type APIKey struct {
	ent.Schema
}

// Fields of the APIKey.
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.String("name").NotEmpty().MaxLen(200),
		field.String("hash").NotEmpty().Unique().Immutable().Sensitive().
			Annotations(entgql.Skip()),
		field.String("prefix").NotEmpty().Immutable().
			Comment("The first characters of the key, so an admin can tell keys apart."),
		field.Enum("role").NamedValues("Admin", "ADMIN", "Client", "CLIENT", "Reader", "READER").Immutable(),
		field.String("tenant").Default("").Immutable().
			Comment("Empty for admin keys, which see every tenant."),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("last_used_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

// Annotations of the APIKey.
func (APIKey) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
	}
}

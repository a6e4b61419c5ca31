package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"sessiongraph/ent/schema/schematype"
)

// EntityType is one kind of entity a domain knows (an entity
// definition): where its rows live, how to label them, which of their
// fields point at other entities, and what the prompts say about them.
type EntityType struct {
	ent.Schema
}

// Fields of the EntityType.
func (EntityType) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.String("domain").NotEmpty().MaxLen(200).
			Annotations(entgql.OrderField("DOMAIN")),
		field.String("name").NotEmpty().MaxLen(100).
			Comment("The ref prefix: recipe gives recipe_1 and gen_recipe_1.").
			Annotations(entgql.OrderField("NAME")),
		field.String("table_name").NotEmpty().MaxLen(200),
		field.String("id_field").Default("id"),
		field.String("label_field").Default("").
			Comment("The record field that names an entity; ignored when label_template is set."),
		field.String("label_template").Default("").
			Comment("A label built from fields, such as {date} {meal_type}."),
		field.JSON("fk_fields", []schematype.FKField{}).Default([]schematype.FKField{}).
			Annotations(entgql.Type("[FKField!]")),
		field.JSON("nested_relations", []schematype.NestedRelation{}).Default([]schematype.NestedRelation{}).
			Annotations(entgql.Type("[NestedRelation!]")),
		field.JSON("detail_fields", []string{}).Default([]string{}).
			Comment("Fields whose presence makes a read full rather than summary."),
		field.Text("data_legend").Default(""),
		field.JSON("content_markers", []string{}).Default([]string{}).
			Comment("Markers that identify generated content of this type in assistant messages."),
		field.Bool("condensed").Default(true).
			Comment("Whether the type is relevant in condensed (Think) context."),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Indexes of the EntityType.
func (EntityType) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("domain", "name").Unique(),
		index.Fields("domain", "table_name").Unique(),
	}
}

// Annotations of the EntityType.
func (EntityType) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.MultiOrder(),
	}
}

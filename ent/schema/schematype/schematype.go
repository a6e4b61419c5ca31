// Package schematype holds the typed shapes stored in JSON columns. They are
// plain structs so that ent stores them as jsonb and gqlgen exposes them as
// GraphQL object and input types.
package schematype

// Focus is what the conversation is currently about: an entity
// type, the ref or id the runtime uses for it, and free-form context.
type Focus struct {
	Type    string         `json:"type"`
	ID      *string        `json:"id,omitempty"` // nil: no particular entity, null in the API
	Context map[string]any `json:"context,omitempty"`
}

// ExecutionSummary is a turn's execution summary: what Think decided,
// which steps ran, what Understand curated, and how the user is steering.
type ExecutionSummary struct {
	Decision      string        `json:"decision,omitempty"`
	Goal          string        `json:"goal,omitempty"`
	Steps         []StepSummary `json:"steps,omitempty"`
	Curation      *Curation     `json:"curation,omitempty"`
	Phase         string        `json:"phase,omitempty"`
	UserExpressed string        `json:"userExpressed,omitempty"`
	BlockedReason *string       `json:"blockedReason,omitempty"`
}

// StepSummary is one executed step of a turn .
type StepSummary struct {
	Step        int      `json:"step"`
	Kind        string   `json:"kind,omitempty"`
	Description string   `json:"description,omitempty"`
	Outcome     string   `json:"outcome,omitempty"`
	Refs        []string `json:"refs,omitempty"`
}

// Curation is what Understand retained or demoted in a turn.
type Curation struct {
	Retained []RetainedRef `json:"retained,omitempty"`
	Demoted  []string      `json:"demoted,omitempty"`
}

// RetainedRef is a ref Understand kept active past the window, with its reason.
type RetainedRef struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
}

// FKField describes a foreign-key field of an entity type: the records of the
// type carry a UUID in Field that points at TargetType rows of Table, whose
// human label lives in NameColumn (lazy FK registration).
type FKField struct {
	Field      string `json:"field" yaml:"field"`
	TargetType string `json:"targetType" yaml:"targetType"`
	Table      string `json:"table" yaml:"table"`
	NameColumn string `json:"nameColumn" yaml:"nameColumn"`
}

// NestedRelation is a list of child records carried inside a parent record,
// such as recipe_ingredients inside a recipe read.
type NestedRelation struct {
	Field      string `json:"field" yaml:"field"`
	EntityType string `json:"entityType" yaml:"entityType"`
}

// ReceiptSection is one section of a recorded context build: its name, its
// token count and whether it was cut to fit (the text is the receipt's).
type ReceiptSection struct {
	Name       string `json:"name"`
	TokenCount int    `json:"tokenCount"`
	Truncated  bool   `json:"truncated"`
}

// Node names a pipeline node whose context is built (UNDERSTAND, THINK,
// ACT, REPLY, MESSAGES): what a context receipt stores. The nodes and how
// each builds are internal/contextbuild's.
type Node string

// Tiers lists the refs of each tier that a context build placed, as a
// context receipt stores them.
type Tiers struct {
	Active    []string `json:"active"`
	Generated []string `json:"generated"`
	Retained  []string `json:"retained"`
}

package engine

import "sessiongraph/internal/registry"

// Limits on what a client may send. The API's edge checks the generic ones
// on every argument of an operation before anything runs (so no oversize
// input ever reaches a transaction); the engine checks those that belong to
// one field, before it opens its transaction.
const (
	// MaxTextBytes bounds any one string: a message, a record's field, a
	// metadata value, a map key.
	MaxTextBytes = 1 << 20
	// MaxListItems bounds any one list: records, ids, labels, refs, and the
	// arrays inside a record.
	MaxListItems = 1000
	// MaxNesting bounds how deep one argument nests objects and lists: a
	// record's nested relations and JSON, a filter's not, and and or.
	MaxNesting = 32
	// MaxInputBytes bounds the text of all the arguments of one operation
	// together; a variable used twice counts twice.
	MaxInputBytes = 4 << 20
	// MaxPredicates bounds the predicates of one filter (a where argument)
	// counted over all its not, and and or branches: nesting and list
	// limits alone let a filter of nested ors grow to millions of
	// predicates, and each costs the server and PostgreSQL work.
	MaxPredicates = 500
	// MaxPatternBytes bounds a search pattern (a filter's Contains,
	// ContainsFold, HasPrefix or HasSuffix): a longer pattern names no more
	// sessions, and the cost of matching grows with its length.
	MaxPatternBytes = 256
	// MaxLabelTemplateBytes bounds an entity type's labelTemplate, and
	// MaxLabelPlaceholders the placeholders in it: a label is a short name
	// for a person, rendered for every record of every read.
	MaxLabelTemplateBytes = 512
	MaxLabelPlaceholders  = 16
	// maxLabelLen bounds a ref's label: a given one is refused above it, a
	// computed one is cut to it.
	maxLabelLen = registry.MaxLabelBytes
)

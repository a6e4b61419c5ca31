package engine

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
	// maxLabelLen bounds a ref's label: a given one is refused above it, a
	// computed one is cut to it.
	maxLabelLen = 1000
)

package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/index"
)

// searchable is a trigram index (pg_trgm's GIN operator class) on a text
// column a filter searches with ContainsFold (ILIKE '%pattern%') or
// Contains (LIKE): without it, such a search reads every row of the table,
// and at 100,000 sessions a search cost seconds however short its answer.
// With it, PostgreSQL looks up the pattern's trigrams and reads only the
// rows that hold them all (a pattern under three characters has none, and
// is still a scan, bounded by its page). docs/fairness.md says more.
func searchable(field, name string) ent.Index {
	return index.Fields(field).StorageKey(name).
		Annotations(entsql.IndexType("GIN"), entsql.OpClass("gin_trgm_ops"))
}

package model

import (
	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/ent"
)

// SessionConnection is a page of sessions as Query.sessions answers it:
// entgql's connection, whose fields gqlgen marshals one by one, or, when
// compiled reads had PostgreSQL write the page, also that page's JSON.
type SessionConnection struct {
	*ent.SessionConnection
	// Compiled, when set, writes the whole connection for the selection
	// it was planned from; gqlgen's marshaller of the type writes it in
	// place of the fields (the schema marks the type @goCompiled:
	// patches/gqlgen-compiled-objects.patch).
	Compiled graphql.Marshaler
}

// Package graph holds the GraphQL resolvers. They stay thin: reads go to the
// ent client (the generated Relay pagination and filters), everything else to
// the engine.
package graph

import (
	"sessiongraph/ent"
	"sessiongraph/graph/compiled"
	"sessiongraph/internal/access"
	"sessiongraph/internal/engine"
)

// Resolver is the root resolver; gqlgen's generated code calls into it.
type Resolver struct {
	Client *ent.Client
	Engine *engine.Engine
	// Keys authenticates WebSocket connections and revokes keys.
	Keys *access.Keys
	// CompiledReads answers the session pages it can with one statement
	// that writes their JSON (graph/compiled); NewServer sets it from
	// its config.
	CompiledReads bool
	// CompiledQuery runs a compiled read's statement through pgx (the
	// store's Query).
	CompiledQuery compiled.Query
}

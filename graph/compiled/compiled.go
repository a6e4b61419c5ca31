// Package compiled carries the JSON of a connection that a resolver had
// PostgreSQL write (graph's compiled reads) to the generated code that would
// otherwise marshal the connection field by field. It sits apart from graph
// so that graph/generated can import it.
package compiled

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

type key struct{}

// results maps a connection a resolver returned to the marshaller that
// writes it whole.
type results struct {
	mu sync.Mutex
	m  map[any]graphql.Marshaler
}

// With returns ctx able to carry compiled results: an operation's context,
// for its resolvers to Set and its marshalling to find.
func With(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, &results{})
}

// Enabled reports whether ctx can carry compiled results.
func Enabled(ctx context.Context) bool {
	_, ok := ctx.Value(key{}).(*results)
	return ok
}

// Set records that obj is to be written by m.
func Set(ctx context.Context, obj any, m graphql.Marshaler) {
	r, ok := ctx.Value(key{}).(*results)
	if !ok {
		return
	}
	r.mu.Lock()
	if r.m == nil {
		r.m = map[any]graphql.Marshaler{}
	}
	r.m[obj] = m
	r.mu.Unlock()
}

// Result returns the marshaller Set for obj, or nil.
func Result(ctx context.Context, obj any) graphql.Marshaler {
	r, ok := ctx.Value(key{}).(*results)
	if !ok {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[obj]
}

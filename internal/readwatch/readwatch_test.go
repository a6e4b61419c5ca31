package readwatch

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
)

type key struct{}

// A detached context keeps its origin's values, deadline and error, has no
// Done channel (so database/sql and pgx start no watch of it), and leads
// the Tracer to its origin through values added on the way.
func TestDetachedContextIsTheOriginWithoutItsDoneChannel(t *testing.T) {
	config, err := pgx.ParseConfig("postgres://localhost/x")
	assert.NoError(t, err)
	Install(config)
	assert.IsType(t, Tracer{}, config.Tracer)

	origin, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	d := Detach(origin)
	assert.Nil(t, d.Done())
	assert.Equal(t, "v", d.Value(key{}))
	wrapped := context.WithValue(d, struct{}{}, 1)
	assert.Nil(t, wrapped.Done())
	assert.Equal(t, origin, wrapped.Value(originKey{}))
	assert.NoError(t, d.Err())
	cancel()
	assert.ErrorIs(t, d.Err(), context.Canceled)

	// A context that cannot end needs no detaching.
	assert.Equal(t, context.Background(), Detach(context.Background()))
}

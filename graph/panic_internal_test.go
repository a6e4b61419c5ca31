package graph

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
)

// panickingResolver stands for a resolver with a bug.
func panickingResolver() { panic("index out of range in a resolver") }

// A resolver's panic answers INTERNAL and is logged with the stack that
// raised it, so that the bug can be found from the log alone.
func TestAPanicIsLoggedWithItsStack(t *testing.T) {
	var logs bytes.Buffer
	present := recoverPanic(slog.New(slog.NewJSONHandler(&logs, nil)))
	var answered error
	func() {
		defer func() { answered = present(context.Background(), recover()) }()
		panickingResolver()
	}()
	var ae *apperr.Error
	require.ErrorAs(t, answered, &ae)
	assert.Equal(t, apperr.Internal, ae.Code)
	assert.Equal(t, "internal error", ae.Message, "the panic's value stays in the log")
	assert.Contains(t, logs.String(), `"panic":"index out of range in a resolver"`)
	assert.Contains(t, logs.String(), "graph.panickingResolver", "the log carries the panic's stack")
}

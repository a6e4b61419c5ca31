package graph

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A resolver panic reaches the client as INTERNAL with no detail; the
// detail goes to the log.
func TestPanicBecomesInternalWithoutDetails(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	err := recoverPanic(log)(context.Background(), "pq: relation secret_table does not exist")
	shown := presentError(log)(context.Background(), err)
	assert.Equal(t, "internal error", shown.Message)
	assert.Equal(t, "INTERNAL", shown.Extensions["code"])
	assert.NotContains(t, shown.Error(), "secret_table")
	assert.Contains(t, logged.String(), "secret_table")
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogLinesCarryTheRequestID(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(requestIDs{slog.NewJSONHandler(&out, nil)}).With("component", "graphql")
	ctx := context.WithValue(context.Background(), requestIDKey{}, "0123456789abcdef")
	log.ErrorContext(ctx, "internal error", "error", "boom")
	log.InfoContext(context.Background(), "no request")

	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	var first, second map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &first))
	require.NoError(t, json.Unmarshal(lines[1], &second))
	assert.Equal(t, "0123456789abcdef", first["request_id"])
	assert.Equal(t, "graphql", first["component"])
	assert.NotContains(t, second, "request_id")
}

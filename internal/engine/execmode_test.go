package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/engine"
)

// TestWritesRunInEveryQueryExecMode: the pool honours pgx's
// default_query_exec_mode from the URL (nothing of ours overrides it), so
// an operator can set one a connection pooler can follow (describe_exec:
// no named statements); a turn with a registry write commits in each, the
// store's batches included. Not exec nor simple_protocol: there pgx types
// an argument by its Go type, and ent passes JSON as []byte, which goes as
// bytea.
func TestWritesRunInEveryQueryExecMode(t *testing.T) {
	for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec"} {
		t.Run(mode, func(t *testing.T) {
			s := apitest.New(t, func(c *app.Config) {
				sep := "?"
				if strings.Contains(c.DatabaseURL, "?") {
					sep = "&"
				}
				c.DatabaseURL += sep + "default_query_exec_mode=" + mode
			})
			ctx := access.System(context.Background())
			opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "mode"})
			require.NoError(t, err)
			id := opened.Session.ID
			_, err = s.Engine.Turns.BeginTurn(ctx, id, "plan my week")
			require.NoError(t, err)
			records := []map[string]any{{"id": uuid.NewString(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": uuid.NewString()}}
			read, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("meal_plans"), Records: records})
			require.NoError(t, err)
			assert.Len(t, read.Refs, 2, "the meal plan and its recipe")
			ended, err := s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "Done."})
			require.NoError(t, err)
			assert.Equal(t, 1, ended.Number)
		})
	}
}

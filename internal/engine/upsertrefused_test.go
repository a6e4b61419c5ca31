package engine_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/engine"
)

// TestARefusedRefsUpsertIsAConflictAndCommitsNothing: the refs' upsert is
// sent with the write's commit (store.Tx.ExecWithCommit), so PostgreSQL's
// refusal of it reaches the write there. Made to refuse here by a trigger
// that raises the unique violation a concurrent change would: the write
// answers CONFLICT, in a write of its own, after a step, and among a
// turn's closing writes; nothing of it is stored, and the session's next
// write succeeds.
func TestARefusedRefsUpsertIsAConflictAndCommitsNothing(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "refused"})
	require.NoError(t, err)
	id := opened.Session.ID
	_, err = s.Engine.Turns.BeginTurn(ctx, id, "what can I cook?")
	require.NoError(t, err)
	_, err = s.DB.Exec(`CREATE FUNCTION refuse_refused_label() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.label = 'Refused' THEN
		RAISE unique_violation USING MESSAGE = 'duplicate key value violates unique constraint "ref_session_id_entity_id"';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER refuse_refused_label BEFORE INSERT OR UPDATE ON refs FOR EACH ROW EXECUTE FUNCTION refuse_refused_label();`)
	require.NoError(t, err)

	stored := func() (events, refs int) {
		t.Helper()
		require.NoError(t, s.DB.QueryRow(`SELECT (SELECT count(*) FROM events WHERE session_id = $1), (SELECT count(*) FROM refs WHERE session_id = $1)`, id).Scan(&events, &refs))
		return events, refs
	}
	recipes := "recipes"
	records := func(name string) []map[string]any {
		return []map[string]any{{"id": uuid.NewString(), "name": name, "cuisine": "french"}}
	}
	step := 1
	writes := map[string]func(name string) error{
		"a read": func(name string) error {
			_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: &recipes, Records: records(name)})
			return err
		},
		"a read at a step": func(name string) error {
			_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: &recipes, Records: records(name), Step: &step})
			return err
		},
		"a closing read": func(name string) error {
			read := engine.RecordReadInput{Table: &recipes, Records: records(name)}
			_, err := s.Engine.Turns.CloseTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "Here.", Closing: []engine.ClosingWrite{{Read: &read}}})
			if err == nil {
				_, err = s.Engine.Turns.BeginTurn(ctx, id, "and now?")
			}
			return err
		},
	}
	for what, write := range writes {
		events, refs := stored()
		err := write("Refused")
		require.Error(t, err, what)
		assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "%s: %v", what, err)
		afterEvents, afterRefs := stored()
		assert.Equal(t, events, afterEvents, "%s: no event", what)
		assert.Equal(t, refs, afterRefs, "%s: no ref", what)
		require.NoError(t, write("Leek gratin"), "%s: the next write goes on", what)
	}
}

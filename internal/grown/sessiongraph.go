package grown

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/engine"
)

// SessionGraph writes the nested page's data: n sessions of tenant opened
// by the engine, each with turns completed turns and refs read refs written
// in bulk, created a second apart from a fixed time so that pages order
// them the same way every run. It returns the sessions' ids in that order.
// The tests (apitest.SessionGraph) and the PostGraphile comparison load it.
func SessionGraph(ctx context.Context, sessions *engine.Sessions, client *ent.Client, db *sql.DB, tenant string, n, turns, refs int) ([]uuid.UUID, error) {
	ctx = access.System(ctx)
	ids := make([]uuid.UUID, n)
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i := range n {
		user := fmt.Sprintf("user-%d", i%7)
		opened, err := sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: tenant, ExternalKey: fmt.Sprintf("%s-chat-%03d", tenant, i), UserID: &user})
		if err != nil {
			return nil, err
		}
		id := opened.Session.ID
		ids[i] = id
		created := start.Add(time.Duration(i) * time.Second)
		if _, err := db.ExecContext(ctx, `UPDATE sessions SET created_at = $1, last_active_at = $2, current_turn = $3 WHERE id = $4`,
			created, created.Add(time.Duration(turns)*time.Minute), turns, id); err != nil {
			return nil, err
		}
		turnRows := make([]*ent.TurnCreate, turns)
		for t := range turns {
			at := created.Add(time.Duration(t) * time.Minute)
			turnRows[t] = client.Turn.Create().SetSessionID(id).SetNumber(t + 1).
				SetUserMessage(fmt.Sprintf("Turn %d: leeks for dinner?", t+1)).SetUserTokens(10).
				SetAssistantMessage("Leek and potato soup.").SetAssistantTokens(5).
				SetStatus("COMPLETED").SetStartedAt(at).SetCompletedAt(at.Add(2 * time.Second))
		}
		if err := client.Turn.CreateBulk(turnRows...).Exec(ctx); err != nil {
			return nil, err
		}
		refRows := make([]*ent.RefCreate, refs)
		for j := range refs {
			turn := j*turns/max(refs, 1) + 1
			refRows[j] = client.Ref.Create().SetSessionID(id).SetRef(fmt.Sprintf("recipe_%d", j+1)).SetEntityType("recipe").
				SetEntityID(uuid.New()).SetLabel(fmt.Sprintf("Recipe %d", j+1)).SetAction("read").
				SetTurnCreated(turn).SetTurnLastReferenced(turn)
		}
		if err := client.Ref.CreateBulk(refRows...).Exec(ctx); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/entitytype"
	"sessiongraph/ent/event"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

// fixture opens a fresh session of the walk's tenant for the next field,
// with a turn open, a read ref and a generated one, so that a field's
// plausible arguments point at live data whatever earlier fields did to
// theirs (expired, deleted, revoked).
func (w *hostileWalk) fixture() *hostileFixture {
	t, s := w.t, w.s
	w.fixtures++
	var out openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": fmt.Sprintf("hostile-%d", w.fixtures)}}, &out)
	id := out.OpenSession.Session.ID
	a := &agent{t: t, s: s, id: id}
	a.do(beginTurn, map[string]any{"m": "what can I cook?"})
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal"})
	a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", content: {name: "Kheer"}}) { ref { ref } } }`, nil)
	w.dirty = true

	ctx := access.System(context.Background())
	sid := uuid.MustParse(id)
	victim := s.NewKey(t, "CLIENT", "acme")
	keyRow := s.Client.APIKey.Query().Order(ent.Desc("created_at")).FirstX(ctx)
	require.Equal(t, victim[:len(keyRow.Prefix)], keyRow.Prefix)
	var page struct {
		Sessions struct {
			Edges []struct{ Cursor string }
		}
	}
	s.MustDo(t, `{ sessions(first: 1) { edges { cursor } } }`, nil, &page)
	require.NotEmpty(t, page.Sessions.Edges)
	fx := &hostileFixture{
		sessionID: id, otherSessionID: w.otherSessionID, keyID: keyRow.ID.String(), cursor: page.Sessions.Edges[0].Cursor,
		nodeIDs: map[string]string{
			"Session":    id,
			"Turn":       s.Client.Turn.Query().Where(turn.SessionID(sid)).OnlyIDX(ctx).String(),
			"Ref":        s.Client.Ref.Query().Where(ref.SessionID(sid), ref.Ref("recipe_1")).OnlyIDX(ctx).String(),
			"Artifact":   s.Client.Artifact.Query().FirstIDX(ctx).String(),
			"Event":      s.Client.Event.Query().Where(event.SessionID(sid)).FirstIDX(ctx).String(),
			"APIKey":     keyRow.ID.String(),
			"EntityType": s.Client.EntityType.Query().Where(entitytype.Name("recipe")).OnlyIDX(ctx).String(),
		},
	}
	w.current = fx
	return fx
}

// subscribe sends a subscription's variants over WebSocket, each on its
// own connection and all at once, and checks every error they answer
// within a moment (a subscription the server accepts stays open silently
// until an event; it is then completed).
func (w *hostileWalk) subscribe(f walkedField, ops []hostileOp) {
	var wg sync.WaitGroup
	for _, op := range ops {
		if op.key == "revoked" {
			continue // a revoked key opens no socket: revokedSocketIsRefused
		}
		vars := w.variables(f, op, w.current)
		if b, _ := json.Marshal(vars); len(b) > 900<<10 {
			continue // over the socket's frame limit: the transport's own test covers it
		}
		w.requests++
		ws := w.s.WithKey(w.keys[op.key]).DialWS(w.t, nil)
		id := ws.Subscribe(w.document(f, op), vars)
		where := fmt.Sprintf("%s with %s (%s key)", f, op.what, op.key)
		wg.Go(func() {
			defer ws.Close()
			m, err := ws.TryRead(300 * time.Millisecond)
			if err != nil {
				return // open and silent
			}
			assert.Equal(w.t, id, m.ID, where)
			switch m.Type {
			case "error":
				var errs []apitest.Error
				assert.NoError(w.t, json.Unmarshal(m.Payload, &errs), where)
				w.checkErrors(where, errs)
			case "next":
				var res apitest.Response
				assert.NoError(w.t, json.Unmarshal(m.Payload, &res), where)
				w.checkErrors(where, res.Errors)
			}
		})
	}
	wg.Wait()
}

package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/migrations"
)

// An imported session's turns show their events: a trace reads a turn's
// events by their turn, not by when they were written. The document's
// events are stamped years before their turns (as a session moved from
// elsewhere, or a clock set right since, may have them), so no time
// window would find them.
func TestDashboardTraceOfAnImportedSession(t *testing.T) {
	t.Parallel()
	ctx := access.System(context.Background())
	from := apitest.New(t)
	r := &agent{t: t, s: from, id: openSession(t, from, map[string]any{"tenant": "acme", "externalKey": "imported-chat"})}
	r.begin("What can I cook with lentils?")
	r.items(`{"type":"function_call","call_id":"call_1","name":"find_recipe","arguments":"{\"q\":\"lentils\"}"}`)
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Dal"})
	r.recordContext("THINK")
	r.modelCall("THINK", "gpt-4o", 900, 0.01, "")
	r.end("Dal.", nil)
	r.begin("And a dessert?")
	r.end("Kheer.", nil)

	version, err := migrations.Latest()
	require.NoError(t, err)
	doc, err := from.Engine.Transfer.ExportSession(ctx, uuid.MustParse(r.id), version)
	require.NoError(t, err)
	long := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, raw := range doc.Events {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(raw, &ev))
		ev["created_at"] = long.Add(time.Duration(i) * time.Second)
		doc.Events[i], err = json.Marshal(ev)
		require.NoError(t, err)
	}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	to := apitest.New(t)
	_, err = to.Engine.Transfer.ImportSession(ctx, bytes.NewReader(b), version)
	require.NoError(t, err)

	br := newBrowser(t)
	br.signInToSession(to.URL, to.AdminKey, r.id)
	for _, c := range []struct {
		turn   int
		events string
	}{
		{1, "turn.began,turn.items_recorded,refs.read,context.recorded,model.call_recorded,turn.ended"},
		// The import's own event is of the session's current turn.
		{2, "turn.began,turn.ended,session.imported"},
	} {
		br.click(fmt.Sprintf("open turn %d's trace", c.turn), fmt.Sprintf("#turn-%d details.trace summary", c.turn))
		br.waitFor(fmt.Sprintf("turn %d's events", c.turn), fmt.Sprintf(
			`[...document.querySelectorAll("#turn-%d .trace-events tbody tr")].map(r => r.dataset.kind).join() === %q`, c.turn, c.events))
	}
	require.Empty(t, br.pageErrors(), "the page logged no error")
}

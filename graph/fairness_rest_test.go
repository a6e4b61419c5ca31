package graph_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

// A READER key floods searches from eight clients, each sending again as
// soon as it is answered, while a CLIENT key of another tenant writes and
// reads its session one operation after the other, over HTTP on a real
// PostgreSQL, with the default slots (two per core) and the rates lifted:
// the flood's key, with searches waiting while the other tenant works,
// rests between its operations, the victim's key,
// which never has one waiting, never does, and every operation of both
// is answered without an error: the rests slow the flood, they fail
// nothing.
func TestAFloodingKeyRestsWhileAnotherTenantWorks(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) {
		c.Fairness = config.Defaults().Fairness
		c.Fairness.KeyRate, c.Fairness.KeyBurst = 1<<20, 1<<20
		c.Fairness.TenantRate, c.Fairness.TenantBurst = 1<<20, 1<<20
	})
	victim := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	flood := s.WithKey(s.NewKey(t, "READER", "acme"))
	floodKey, victimKey := slotKey(t, flood), slotKey(t, victim)
	id := sessionOf(t, victim, "globex", "victim")
	for i := range 20 {
		sessionOf(t, s, "acme", "acme-conversation-"+string(rune('a'+i)))
	}
	slots := s.Slots()

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var searches, failed atomic.Int64
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				res := flood.Do(t, floodSearch, nil)
				searches.Add(1)
				if res.Status != 200 || len(res.Errors) > 0 {
					failed.Add(1)
				}
			}
		})
	}
	// The victim works until the flood's key has been seen resting.
	for i := 0; slots.Rests(floodKey) == 0 || i < 50; i++ {
		require.Less(t, i, 20000, "the flood's key never rested")
		if i%2 == 0 {
			res := victim.Do(t, updateSummary, map[string]any{"id": id, "h": "written under a flood"})
			require.Empty(t, res.Errors, "the victim's write %d", i)
		} else {
			res := victim.Do(t, `query($id: ID!) { session(id: $id) { historySummary } }`, map[string]any{"id": id})
			require.Empty(t, res.Errors, "the victim's read %d", i)
		}
	}
	stop()
	wg.Wait()
	assert.Positive(t, slots.Rests(floodKey))
	assert.Zero(t, slots.Rests(victimKey), "the victim's key, with nothing waiting, never rests")
	assert.Positive(t, searches.Load())
	assert.Zero(t, failed.Load(), "every search of the flood is answered")
}

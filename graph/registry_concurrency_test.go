package graph_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/event"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

// 32 agents read overlapping sets of the same recipes into one session at
// once: every UUID must end with exactly one ref, numbering must have no
// gaps, and every committed call must leave exactly one event.
func TestConcurrentReadsKeepOneRefPerEntityAndGaplessNumbers(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "busy")
	a.turn("go")
	const workers, calls, pool, perCall = 32, 50, 120, 6
	ids := make([]string, pool)
	for i := range ids {
		ids[i] = uuid.NewString()
	}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for c := range calls {
				records := make([]map[string]any, perCall)
				for k := range perCall {
					// Overlapping windows of the pool, different per worker and call.
					id := ids[(w*7+c*13+k*pool/perCall)%pool]
					records[k] = map[string]any{"id": id, "name": "recipe " + id[:8]}
				}
				res := s.Do(t, recordRead, map[string]any{"id": a.id, "table": "recipes", "records": records})
				assert.Empty(t, res.Errors)
			}
		})
	}
	wg.Wait()

	ctx := access.System(context.Background())
	rows := s.Client.Ref.Query().Where(ref.EntityType("recipe")).AllX(ctx)
	seenIDs := map[uuid.UUID]string{}
	numbers := make([]int, 0, len(rows))
	for _, r := range rows {
		require.NotNil(t, r.EntityID)
		prev, dup := seenIDs[*r.EntityID]
		require.False(t, dup, "UUID %s has two refs: %s and %s", *r.EntityID, prev, r.Ref)
		seenIDs[*r.EntityID] = r.Ref
		var n int
		_, err := fmt.Sscanf(r.Ref, "recipe_%d", &n)
		require.NoError(t, err)
		numbers = append(numbers, n)
	}
	sort.Ints(numbers)
	for i, n := range numbers {
		require.Equal(t, i+1, n, "ref numbering has a gap")
	}
	assert.Len(t, numbers, pool, "every UUID of the pool was read at least once")

	session := s.Client.Session.GetX(ctx, uuid.MustParse(a.id))
	assert.Equal(t, pool, session.RefCounters["recipe"], "the counter matches the refs handed out")
	assert.Equal(t, workers*calls, s.Client.Event.Query().Where(event.Kind("refs.read")).CountX(ctx), "one event per committed call")
}

func TestTwoHundredConcurrentMetadataMerges(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "merge"}).OpenSession.Session.ID
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			s.MustDo(t, updateSession, map[string]any{"in": map[string]any{
				"id": id, "metadata": map[string]any{fmt.Sprintf("k%03d", i): "v"}}}, nil)
		})
	}
	wg.Wait()
	got := s.Client.Session.GetX(access.System(context.Background()), uuid.MustParse(id))
	require.Len(t, got.Metadata, 200, "no merge lost a key")
	for i := range 200 {
		assert.Equal(t, "v", got.Metadata[fmt.Sprintf("k%03d", i)])
	}
}

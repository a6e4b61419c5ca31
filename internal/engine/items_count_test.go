package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/tokenizer"
)

// recordItems counts its items before it takes the session's lock when
// this replica's last write to the session saw its tokenizer, and under the
// lock otherwise (the session's first write here): each item is counted by
// the session's own tokenizer either way, and the write costs
// the same three round trips (BEGIN and the lock; the open turn; the items,
// the turn, the session, the event and COMMIT).
func TestRecordItemsCountsBeforeTheLockByTheSessionsTokenizer(t *testing.T) {
	var log statementLog
	s := apitest.New(t, log.wrap)
	ctx := access.System(context.Background())
	// The same text counts differently by each tokenizer.
	text := "Grüße aus Köln: 18°C, sonnig — danke! 東京は晴れ"
	items := []string{`{"role":"assistant","content":"` + text + `"}`}
	want := map[tokenizer.Name]int{}
	for _, name := range []tokenizer.Name{tokenizer.CL100K, tokenizer.O200K, tokenizer.Chars4} {
		c, err := tokenizer.Get(name)
		require.NoError(t, err)
		want[name] = c.Count(text)
	}
	require.NotEqual(t, want[tokenizer.CL100K], want[tokenizer.O200K])

	for _, name := range []tokenizer.Name{tokenizer.CL100K, tokenizer.O200K, tokenizer.Chars4} {
		n := string(name)
		opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "count-" + n, Tokenizer: &n})
		require.NoError(t, err)
		id := opened.Session.ID
		_, err = s.Engine.Turns.BeginTurn(ctx, id, "")
		require.NoError(t, err)
		// The first write counts under the lock; the second before it,
		// by the tokenizer the first saw.
		for _, write := range []string{"first", "second"} {
			var got *engine.RecordedItems
			trips := log.record(func() {
				got, err = s.Engine.Turns.RecordItems(ctx, engine.RecordItemsInput{SessionID: id, Items: items})
				require.NoError(t, err)
			})
			assert.Len(t, trips, 3, "%s, %s write: round trips", n, write)
			require.Len(t, got.Items, 1)
			assert.Equal(t, want[name], got.Items[0].TokenCount, "%s, %s write", n, write)
		}
		session, err := s.Engine.Sessions.Session(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, 2*want[name], session.TokenCount, "%s: the session counts both writes' items", n)
	}
}

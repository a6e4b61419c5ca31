package graph_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/contextreceipt"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

const factSearchPage = `query($fact: FactInput!, $node: ContextNode! = THINK, $after: String) {
  sessionsHoldingFact(fact: $fact, node: $node, after: $after) { sessions { externalKey } scanned next } }`

type factSearchOut struct {
	SessionsHoldingFact struct {
		Sessions []struct {
			ExternalKey string `json:"externalKey"`
		} `json:"sessions"`
		Scanned int     `json:"scanned"`
		Next    *string `json:"next"`
	} `json:"sessionsHoldingFact"`
}

// A fact search's next is valid only for the search that handed it out:
// the same fact, node and tenant, spelled as it was given.
func TestFactSearchCursorIsValidOnlyForItsSearch(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "peanut")
	a.turn("I have a peanut allergy")
	a.recordContext("THINK")
	// More receipts than one page reads: copies of that build, older.
	ctx := access.System(context.Background())
	receipt := s.Client.ContextReceipt.Query().Where(contextreceipt.SessionID(uuid.MustParse(a.id))).OnlyX(ctx)
	_, err := s.DB.ExecContext(ctx, `INSERT INTO context_receipts
	  SELECT (jsonb_populate_record(r, jsonb_build_object('id', gen_random_uuid(), 'created_at', r.created_at - g * interval '1 second'))).*
	  FROM context_receipts r, generate_series(1, $2::int) g WHERE r.id = $1`, receipt.ID, engine.FactScanReceipts)
	require.NoError(t, err)

	peanut := map[string]any{"text": "peanut"}
	var first factSearchOut
	s.MustDo(t, factSearchPage, map[string]any{"fact": peanut}, &first)
	require.Equal(t, engine.FactScanReceipts, first.SessionsHoldingFact.Scanned)
	require.NotNil(t, first.SessionsHoldingFact.Next)
	next := *first.SessionsHoldingFact.Next

	var second factSearchOut
	s.MustDo(t, factSearchPage, map[string]any{"fact": peanut, "after": next}, &second)
	assert.Equal(t, 1, second.SessionsHoldingFact.Scanned, "the search goes on where it stopped")
	assert.Nil(t, second.SessionsHoldingFact.Next)

	acmeReader := s.WithKey(s.NewKey(t, "READER", "acme"))
	before := dataDigest(t, s)
	refused := func(how string, srv *apitest.Server, vars map[string]any) {
		t.Helper()
		res := srv.Do(t, factSearchPage, vars)
		require.Len(t, res.Errors, 1, how)
		assert.Equal(t, "INVALID_CURSOR", res.Errors[0].Code(), "%s: %s", how, res.Errors[0].Message)
	}
	refused("another fact", s, map[string]any{"fact": map[string]any{"text": "cashew"}, "after": next})
	refused("another ref", s, map[string]any{"fact": map[string]any{"ref": "recipe_1"}, "after": next})
	refused("another node", s, map[string]any{"fact": peanut, "node": "ACT", "after": next})
	refused("another tenant", acmeReader, map[string]any{"fact": peanut, "after": next})

	raw, err := base64.RawURLEncoding.DecodeString(next)
	require.NoError(t, err)
	spellings := map[string]string{
		"padded":          base64.URLEncoding.EncodeToString(raw) + "=",
		"a byte appended": base64.RawURLEncoding.EncodeToString(append(raw, ' ')),
		"a byte cut":      base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]),
		"text appended":   next + "AAAA",
		"a Session.turns cursor": func() string {
			var p struct {
				Node struct {
					Turns struct {
						Edges []struct{ Cursor string } `json:"edges"`
					} `json:"turns"`
				} `json:"node"`
			}
			s.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Session { turns(first: 1) { edges { cursor } } } } }`, map[string]any{"id": a.id}, &p)
			return p.Node.Turns.Edges[0].Cursor
		}(),
	}
	if std := base64.RawStdEncoding.EncodeToString(raw); std != next {
		spellings["std alphabet"] = std
	}
	for how, bad := range spellings {
		refused(how, s, map[string]any{"fact": peanut, "after": bad})
	}
	assert.Equal(t, before, dataDigest(t, s), "refused cursors changed no data")
}

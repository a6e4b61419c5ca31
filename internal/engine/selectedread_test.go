package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// sameRefs fails unless typed and byEnt are the same refs, each equal in
// every exported field (a field added to the schema later fails here
// until the typed read has it), the joined artifact included.
func sameRefs(t *testing.T, byEnt, typed []*ent.Ref, what string) {
	t.Helper()
	sortRefs := func(rows []*ent.Ref) { sort.Slice(rows, func(i, j int) bool { return rows[i].Ref < rows[j].Ref }) }
	sortRefs(byEnt)
	sortRefs(typed)
	require.Equal(t, refNames(byEnt), refNames(typed), what)
	for i := range byEnt {
		w, g := reflect.ValueOf(byEnt[i]).Elem(), reflect.ValueOf(typed[i]).Elem()
		compared := 0
		for f := 0; f < w.NumField(); f++ {
			field := w.Type().Field(f)
			if !field.IsExported() {
				continue
			}
			compared++
			require.True(t, reflect.DeepEqual(w.Field(f).Interface(), g.Field(f).Interface()),
				"%s: %s field %s: ent %#v, typed %#v", what, byEnt[i].Ref, field.Name, w.Field(f).Interface(), g.Field(f).Interface())
		}
		require.Equal(t, len(ref.Columns)+1, compared, "every column's field and the edges")
	}
}

// The refs a registry write selects, read on its transaction by one fixed
// statement into typed fields, are ent's read of the same selection, field
// by field, artifacts included: by entity ids, by names, both, a pending
// artifact's type and label (case and spaces aside), with and without the
// artifacts; confined to the caller's tenant as ent's interceptor confines
// (another tenant's key reads nothing), over sessions driven through
// random writes of every kind (reads, saves, generated and promoted
// artifacts, retention, enrichment, deletions).
func TestSelectedRefsReadAsEnt(t *testing.T) {
	s := apitest.New(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	ctx := access.System(context.Background())
	acme := access.WithPrincipal(context.Background(), &access.Principal{KeyID: uuid.New(), Role: apikey.RoleClient, Tenant: "acme"})
	globex := access.WithPrincipal(context.Background(), &access.Principal{KeyID: uuid.New(), Role: apikey.RoleClient, Tenant: "globex"})
	compared, withArtifacts, pending := 0, 0, 0
	for n := range 2 {
		q := &equivalence{t: t, s: s, rng: rand.New(rand.NewPCG(seed, uint64(n))), ctx: ctx,
			known: map[string][]uuid.UUID{}, byKind: map[string]int{}}
		opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: fmt.Sprintf("selected-%d-%d", seed, n)})
		require.NoError(t, err)
		q.id = opened.Session.ID
		_, err = s.Engine.Turns.BeginTurn(ctx, q.id, "hello")
		require.NoError(t, err)
		for w := range 80 {
			q.write()
			if w%20 != 19 {
				continue
			}
			var ids []uuid.UUID
			for _, known := range q.known {
				ids = append(ids, known...)
			}
			ids = append(ids, uuid.New()) // an entity the session never saw
			names := append(q.refs(""), "recipe_999999")
			half := func(all []string) []string { return all[:len(all)/2] }
			type pendingRef struct{ of, label string }
			var pend []pendingRef
			// A pending artifact to select by label, whatever the writes
			// left: generated in a turn (begun when none is open).
			_, _ = s.Engine.Turns.BeginTurn(ctx, q.id, "more")
			_, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: q.id, EntityType: "recipe",
				Content: map[string]any{"name": fmt.Sprintf("Pending tart %d", w), "servings": 2}})
			require.NoError(t, err)
			rows, err := s.DB.Query(`SELECT r.entity_type, r.label FROM refs r JOIN artifacts a ON a.session_id = r.session_id AND a.ref_id = r.id
				WHERE r.session_id = $1 AND a.status = 'PENDING'`, q.id)
			require.NoError(t, err)
			for rows.Next() {
				var p pendingRef
				require.NoError(t, rows.Scan(&p.of, &p.label))
				p.label = "  " + strings.ToUpper(p.label) + " "
				pend = append(pend, p)
			}
			require.NoError(t, rows.Close())
			for _, artifacts := range []bool{false, true} {
				sels := []struct {
					what             string
					ids              []uuid.UUID
					names            []string
					pendOf, pendName string
				}{
					{what: "by entity", ids: ids},
					{what: "by name", names: names},
					{what: "both", ids: ids[:len(ids)/2], names: half(names)},
					{what: "one name", names: []string{q.someRef()}},
				}
				for _, p := range pend {
					sels = append(sels, struct {
						what             string
						ids              []uuid.UUID
						names            []string
						pendOf, pendName string
					}{what: "pending " + p.label, ids: []uuid.UUID{uuid.New()}, pendOf: p.of, pendName: p.label})
					pending++
				}
				for _, sel := range sels {
					what := fmt.Sprintf("%s, artifacts %v, after %d writes", sel.what, artifacts, w+1)
					for _, c := range []context.Context{ctx, acme} {
						typed, byEnt, err := s.Engine.Reads.SelectedBothWays(c, q.id, sel.ids, sel.names, sel.pendOf, sel.pendName, artifacts)
						require.NoError(t, err)
						if sel.what != "one name" {
							require.NotEmpty(t, byEnt, what)
						}
						sameRefs(t, byEnt, typed, what)
						compared += len(typed)
						for _, r := range typed {
							if r.Edges.Artifact != nil {
								withArtifacts++
							}
						}
					}
					typed, byEnt, err := s.Engine.Reads.SelectedBothWays(globex, q.id, sel.ids, sel.names, sel.pendOf, sel.pendName, artifacts)
					require.NoError(t, err)
					require.Empty(t, byEnt, "another tenant's key reads nothing")
					require.Empty(t, typed, "another tenant's key reads nothing")
				}
			}
		}
	}
	t.Logf("%d refs compared, %d with artifacts, %d pending selections", compared, withArtifacts, pending)
	require.Positive(t, withArtifacts)
	require.Positive(t, pending)
	// An unauthenticated caller is refused alike.
	_, _, err := s.Engine.Reads.SelectedBothWays(context.Background(), uuid.New(), []uuid.UUID{uuid.New()}, nil, "", "", false)
	require.ErrorIs(t, err, access.ErrUnauthenticated)
}

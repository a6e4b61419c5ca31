package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// floorSamples is how many SELECT 1 round trips set each benchmark's floor.
const floorSamples = 300

// measure runs op b.N times and reports its median and the median's ratios
// to two floors measured in the same run, on the same pool: a bare SELECT 1
// round trip and a single-row durable insert (a commit that waits for the
// WAL flush). An absolute time alone says little on a shared machine.
func measure(b *testing.B, db *sql.DB, op func(i int)) {
	b.Helper()
	floor := median(floorSamples, func() {
		var one int
		require.NoError(b, db.QueryRow(`SELECT 1`).Scan(&one))
	})
	_, err := db.Exec(`CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, at timestamptz NOT NULL)`)
	require.NoError(b, err)
	insert := median(floorSamples/3, func() {
		_, err := db.Exec(`INSERT INTO bench_floor (at) VALUES (now())`)
		require.NoError(b, err)
	})
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		op(i)
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	med := times[len(times)/2]
	b.ReportMetric(float64(med.Microseconds()), "median-µs")
	b.ReportMetric(float64(floor.Microseconds()), "select1-µs")
	b.ReportMetric(float64(med)/float64(floor), "x-select1")
	b.ReportMetric(float64(insert.Microseconds()), "insert-µs")
	b.ReportMetric(float64(med)/float64(insert), "x-insert")
}

func median(n int, f func()) time.Duration {
	times := make([]time.Duration, n)
	for i := range times {
		start := time.Now()
		f()
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	return times[n/2]
}

// benchSession opens a session in its first turn.
func benchSession(b *testing.B) (*apitest.Server, uuid.UUID) {
	s := apitest.New(b)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "bench", ExternalKey: b.Name()})
	require.NoError(b, err)
	_, err = s.Engine.Turns.BeginTurn(ctx, opened.Session.ID, "go")
	require.NoError(b, err)
	return s, opened.Session.ID
}

// mealPlans makes n meal plan records, each pointing at a recipe: half of
// them at recipes the session already knows, half at new ones.
func mealPlans(n int, known []string) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		recipe := uuid.NewString()
		if i%2 == 0 && len(known) > 0 {
			recipe = known[i%len(known)]
		}
		out[i] = map[string]any{"id": uuid.NewString(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": recipe}
	}
	return out
}

func benchRecordRead(b *testing.B, n int) {
	s, id := benchSession(b)
	ctx := access.System(context.Background())
	known := make([]string, 10)
	seed := make([]map[string]any, len(known))
	for i := range known {
		known[i] = uuid.NewString()
		seed[i] = map[string]any{"id": known[i], "name": fmt.Sprintf("Recipe %d", i)}
	}
	_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("recipes"), Records: seed})
	require.NoError(b, err)
	inputs := make([][]map[string]any, b.N)
	for i := range inputs {
		inputs[i] = mealPlans(n, known)
	}
	measure(b, s.DB, func(i int) {
		_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("meal_plans"), Records: inputs[i]})
		require.NoError(b, err)
	})
}

func BenchmarkRecordRead20(b *testing.B)  { benchRecordRead(b, 20) }
func BenchmarkRecordRead100(b *testing.B) { benchRecordRead(b, 100) }

func BenchmarkRecordGenerated(b *testing.B) {
	s, id := benchSession(b)
	ctx := access.System(context.Background())
	measure(b, s.DB, func(i int) {
		_, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
			Content: map[string]any{"name": fmt.Sprintf("Dish %d", i), "ingredients": []any{"rice", "dal"}, "instructions": "Simmer."}})
		require.NoError(b, err)
	})
}

// BenchmarkRecordCreatedPromotion measures promoting a pending artifact
// matched by type and label, among the session's other pending artifacts.
func BenchmarkRecordCreatedPromotion(b *testing.B) {
	s, id := benchSession(b)
	ctx := access.System(context.Background())
	for i := 0; i < b.N; i++ {
		_, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
			Content: map[string]any{"name": fmt.Sprintf("Dish %d", i)}})
		require.NoError(b, err)
	}
	measure(b, s.DB, func(i int) {
		label := fmt.Sprintf("Dish %d", i)
		res, err := s.Engine.Writes.RecordCreated(ctx, engine.RecordCreatedInput{SessionID: id, EntityType: "recipe",
			EntityID: uuid.New(), Label: &label})
		require.NoError(b, err)
		require.True(b, res.Promoted)
	})
}

func BenchmarkTranslateFilters50(b *testing.B) {
	s, id := benchSession(b)
	ctx := access.System(context.Background())
	records := make([]map[string]any, 50)
	refs := make([]any, 50)
	for i := range records {
		records[i] = map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Recipe %d", i)}
		refs[i] = fmt.Sprintf("recipe_%d", i+1)
	}
	_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("recipes"), Records: records})
	require.NoError(b, err)
	session, err := s.Engine.Sessions.Session(ctx, id)
	require.NoError(b, err)
	filters := []*engine.FilterInput{{Field: "id", Op: "in", Value: refs}}
	measure(b, s.DB, func(int) {
		out, err := s.Engine.Reads.TranslateFilters(ctx, session, nil, new("recipes"), filters)
		require.NoError(b, err)
		require.Len(b, out.Filters[0].Value, 50)
	})
}

// benchHugeLabel measures recordRead of one recipe whose name, its label,
// is size bytes of multi-byte text: the label is cut to 1,000 bytes inside
// the session's transaction, so its cost is time other writes wait.
func benchHugeLabel(b *testing.B, size int) {
	s, id := benchSession(b)
	ctx := access.System(context.Background())
	name := strings.Repeat("é", size/2)
	measure(b, s.DB, func(int) {
		out, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("recipes"),
			Records: []map[string]any{{"id": uuid.NewString(), "name": name}}})
		require.NoError(b, err)
		require.Len(b, out.Records, 1)
	})
}

func BenchmarkRecordReadLabel48KB(b *testing.B)   { benchHugeLabel(b, 48<<10) }
func BenchmarkRecordReadLabel1900KB(b *testing.B) { benchHugeLabel(b, 1900<<10) }

package store_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
)

// Each writer count runs benchRounds rounds; a round runs the floor, then
// the writes with their events (the order alternates), benchRound each.
const (
	benchRounds = 3
	benchRound  = 600 * time.Millisecond
)

// BenchmarkConcurrentWriters runs N writers on N distinct sessions, each
// committing a registry write (a new ref and the session's counters) with
// its event through the store, beside the floor: the same transaction
// without the event path (no event, no numbering, no doorbell). Both run
// on the server's own pool (sized from the machine) with its event hub
// reading, interleaved in the same run. It reports each one's commits per
// second (the median of the rounds), their ratio, and each one's median
// commit time.
func BenchmarkConcurrentWriters(b *testing.B) {
	for _, n := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", n), func(b *testing.B) { benchWriters(b, n) })
	}
}

func benchWriters(b *testing.B, writers int) {
	s := apitest.New(b)
	ctx := access.System(context.Background())
	bell := events.NewDoorbell(s.DB, s.Hub, slog.New(slog.NewTextHandler(io.Discard, nil)))
	st := store.New(s.Client, s.DB, store.RingOnCommit(bell.Ring)) // as the server's own store does
	bellCtx, stop := context.WithCancel(ctx)
	rang := make(chan struct{})
	go func() { defer close(rang); bell.Run(bellCtx) }()
	b.Cleanup(func() { stop(); <-rang })

	sessions := make([]uuid.UUID, writers)
	for i := range sessions {
		o, err := st.Open(ctx, "bench", fmt.Sprintf("writer-%d", i), func(c *ent.SessionCreate) {
			c.SetDomain("kitchen").SetTTLSeconds(3600)
		})
		require.NoError(b, err)
		sessions[i] = o.Session.ID
	}
	refs := make([]int, writers) // each writer's next ref number
	withEvent := func(w int) error {
		refs[w]++
		work, err := st.Begin(ctx, sessions[w])
		if err != nil {
			return err
		}
		defer work.Rollback()
		if err := registryWrite(ctx, work.Tx, work.Update(), sessions[w], refs[w]); err != nil {
			return err
		}
		_, err = work.Commit(ctx, store.Record(store.Event{Kind: "refs.read", Payload: map[string]any{"refs": []any{fmt.Sprintf("recipe_%d", refs[w])}}}))
		return err
	}
	floor := func(w int) error {
		refs[w]++
		tx, err := s.Client.Tx(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		locked, err := tx.Session.Query().Where(session.ID(sessions[w])).ForUpdate().Only(ctx)
		if err != nil {
			return err
		}
		update := tx.Session.Update().Where(session.ID(locked.ID))
		if err := registryWrite(ctx, tx, update, sessions[w], refs[w]); err != nil {
			return err
		}
		now := time.Now()
		if err := update.SetLastActiveAt(now).SetExpiresAt(now.Add(time.Hour)).Exec(ctx); err != nil {
			return err
		}
		return tx.Commit()
	}

	var floorRates, eventRates []float64
	var floorTimes, eventTimes []time.Duration
	b.ResetTimer()
	for round := range benchRounds {
		order := []bool{false, true}
		if round%2 == 1 {
			order = []bool{true, false}
		}
		for _, events := range order {
			op := floor
			if events {
				op = withEvent
			}
			rate, times := runWriters(b, writers, op)
			if events {
				eventRates, eventTimes = append(eventRates, rate), append(eventTimes, times...)
			} else {
				floorRates, floorTimes = append(floorRates, rate), append(floorTimes, times...)
			}
		}
	}
	b.StopTimer()
	slices.Sort(floorRates)
	slices.Sort(eventRates)
	f, e := floorRates[len(floorRates)/2], eventRates[len(eventRates)/2]
	b.ReportMetric(f, "floor-commits/s")
	b.ReportMetric(e, "event-commits/s")
	b.ReportMetric(f/e, "x-floor")
	b.ReportMetric(float64(medianOf(floorTimes).Microseconds()), "floor-median-µs")
	b.ReportMetric(float64(medianOf(eventTimes).Microseconds()), "event-median-µs")
	b.ReportMetric(float64(s.DB.Stats().MaxOpenConnections), "pool")
}

// registryWrite is the write both sides commit: a new ref and the
// session's ref counter.
func registryWrite(ctx context.Context, tx *ent.Tx, update *ent.SessionUpdate, sessionID uuid.UUID, n int) error {
	update.SetRefCounters(map[string]int{"recipe": n})
	return tx.Ref.Create().SetSessionID(sessionID).SetRef(fmt.Sprintf("recipe_%d", n)).SetEntityType("recipe").
		SetEntityID(uuid.New()).SetLabel(fmt.Sprintf("Dish %d", n)).SetAction("read").
		SetTurnCreated(0).SetTurnLastReferenced(0).Exec(ctx)
}

// runWriters runs op on every writer, each in a loop, for benchRound, and
// returns the commits per second of them all and each commit's time.
func runWriters(b *testing.B, writers int, op func(w int) error) (float64, []time.Duration) {
	var wg sync.WaitGroup
	times := make([][]time.Duration, writers)
	start := time.Now()
	deadline := start.Add(benchRound)
	for w := range writers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t := time.Now()
				if err := op(w); err != nil {
					b.Error(err)
					return
				}
				times[w] = append(times[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(times...)
	return float64(len(all)) / elapsed.Seconds(), all
}

func medianOf(times []time.Duration) time.Duration {
	slices.Sort(times)
	return times[len(times)/2]
}

package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const subscriberProcessEnv = "SG_SUBSCRIBER_PROCESS"

// eventsPerRun is how many events each subscriber receives in a run, one
// every eventInterval.
const (
	eventsPerRun  = 20
	eventInterval = 100 * time.Millisecond
)

// BenchmarkSubscribers measures N idle WebSocket subscribers on one session:
// the event-to-client latency (from the event's commit timestamp to its
// arrival at each client) and the server's memory per idle subscription.
// The clients run in a child process. SG_CPU_PROFILE and
// SG_CLIENT_CPU_PROFILE name files (suffixed with N) for CPU profiles of
// the server and of the clients while the events go out.
func BenchmarkSubscribers(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := apitest.New(b)
			id := open(&testing.T{}, s, map[string]any{"tenant": "bench", "externalKey": "subscribers"}).OpenSession.Session.ID
			beforeHeap, beforeStack := serverMemorySplit()
			before := beforeHeap + beforeStack
			goroutines := runtime.NumGoroutine()

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), subscriberProcessEnv+"=1", "SG_URL="+s.URL, "SG_KEY="+s.Key, "SG_SESSION="+id, fmt.Sprintf("SG_N=%d", n))
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			require.NoError(b, err)
			require.NoError(b, cmd.Start())
			lines := bufio.NewScanner(out)
			lines.Buffer(make([]byte, 1<<20), 64<<20)
			require.True(b, lines.Scan())
			require.Equal(b, "ready", lines.Text())
			require.Eventually(b, func() bool { return s.Hub.Subscribers() >= n }, time.Minute, 20*time.Millisecond,
				"not every subscriber registered")
			heap, stack := serverMemorySplit()
			perSub := float64(heap+stack-before) / float64(n)
			stackPerSub := float64(stack-beforeStack) / float64(n)
			if path := os.Getenv("SG_HEAP_PROFILE"); path != "" {
				f, err := os.Create(path)
				require.NoError(b, err)
				require.NoError(b, pprof.WriteHeapProfile(f))
				f.Close()
				g, err := os.Create(path + ".goroutines")
				require.NoError(b, err)
				require.NoError(b, pprof.Lookup("goroutine").WriteTo(g, 1))
				g.Close()
			}
			goroutinesPerSub := float64(runtime.NumGoroutine()-goroutines) / float64(n)

			b.ResetTimer()
			if path := os.Getenv("SG_CPU_PROFILE"); path != "" {
				f, err := os.Create(fmt.Sprintf("%s.%d", path, n))
				require.NoError(b, err)
				require.NoError(b, pprof.StartCPUProfile(f))
			}
			for i := 0; i < eventsPerRun; i++ {
				s.MustDo(&testing.T{}, updateSession, map[string]any{"in": map[string]any{"id": id, "metadata": map[string]any{"i": strconv.Itoa(i)}}}, nil)
				time.Sleep(eventInterval) // the rate of events is what is measured, not a wait for a condition
			}
			pprof.StopCPUProfile()
			require.True(b, lines.Scan(), "the client process reports its latencies")
			var lat []float64
			require.NoError(b, json.Unmarshal(lines.Bytes(), &lat))
			require.NoError(b, cmd.Wait())
			require.Len(b, lat, n*eventsPerRun, "every subscriber received every event")
			slices.Sort(lat)
			b.ReportMetric(lat[len(lat)/2], "median-ms")
			b.ReportMetric(lat[len(lat)*99/100], "p99-ms")
			b.ReportMetric(perSub/1024, "KB/idle-sub")
			b.ReportMetric(stackPerSub/1024, "stack-KB/idle-sub")
			b.ReportMetric(goroutinesPerSub, "goroutines/sub")
		})
	}
}

// serverMemorySplit is the heap and the stacks in use, after two
// collections (the second lets the runtime shrink stacks that grew while
// the subscriptions were set up).
func serverMemorySplit() (heap, stack uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.StackInuse
}

// runSubscriberProcess opens SG_N subscriptions, prints "ready", receives
// eventsPerRun events on each, and prints every latency in milliseconds.
func runSubscriberProcess() int {
	url := "ws" + strings.TrimPrefix(os.Getenv("SG_URL"), "http") + "/graphql"
	n, _ := strconv.Atoi(os.Getenv("SG_N"))
	// One watchdog for the process rather than a deadline on every read:
	// coder/websocket arms a callback per read for a context that can end,
	// which is a fifth of the clients' CPU, taken from the server they measure.
	watchdog := time.AfterFunc(5*time.Minute, func() {
		fmt.Fprintln(os.Stderr, "subscriber process timed out")
		os.Exit(1)
	})
	defer watchdog.Stop()
	ctx := context.Background()
	var mu sync.Mutex
	var lat []float64
	var ready, done sync.WaitGroup
	for range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err != nil {
				fmt.Fprintln(os.Stderr, "dial:", err)
				os.Exit(1)
			}
			defer conn.CloseNow()
			_ = wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + os.Getenv("SG_KEY")}})
			var ack map[string]any
			if err := wsjson.Read(ctx, conn, &ack); err != nil || ack["type"] != "connection_ack" {
				fmt.Fprintln(os.Stderr, "connection_init:", ack, err)
				os.Exit(1)
			}
			_ = wsjson.Write(ctx, conn, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
				"query":     `subscription($id: ID!) { sessionEvents(sessionID: $id) { sequence createdAt } }`,
				"variables": map[string]any{"id": os.Getenv("SG_SESSION")}}})
			ready.Done()
			// The clients are the instrument: they read raw frames and pick
			// out createdAt without decoding, so they take as little of the
			// shared CPU from the server as they can.
			for got := 0; got < eventsPerRun; {
				_, msg, err := conn.Read(ctx)
				if err != nil {
					fmt.Fprintln(os.Stderr, "read:", err)
					os.Exit(1)
				}
				if bytes.Contains(msg, []byte(`"type":"ping"`)) {
					_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`))
					continue
				}
				i := bytes.Index(msg, []byte(`"createdAt":"`))
				if i < 0 {
					continue
				}
				rest := msg[i+len(`"createdAt":"`):]
				at, err := time.Parse(time.RFC3339Nano, string(rest[:bytes.IndexByte(rest, '"')]))
				if err != nil {
					fmt.Fprintln(os.Stderr, "createdAt:", err)
					os.Exit(1)
				}
				d := time.Since(at)
				mu.Lock()
				lat = append(lat, float64(d.Microseconds())/1000)
				mu.Unlock()
				got++
			}
		}()
	}
	ready.Wait()
	if path := os.Getenv("SG_CLIENT_CPU_PROFILE"); path != "" {
		f, _ := os.Create(fmt.Sprintf("%s.%d", path, n))
		_ = pprof.StartCPUProfile(f)
	}
	fmt.Println("ready")
	done.Wait()
	pprof.StopCPUProfile()
	b, _ := json.Marshal(lat)
	fmt.Println(string(b))
	return 0
}

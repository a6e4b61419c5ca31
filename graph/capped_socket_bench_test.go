package graph_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/config"
)

const cappedSocketsEnv = "SG_CAPPED_SOCKETS"

// BenchmarkSocketAtItsCap measures what the server holds for a WebSocket
// that carries as many subscriptions as one socket may
// (its default, config.Defaults): its memory (heap and stacks) and
// goroutines, per socket and per subscription. The sockets are opened by a
// child process, so that only the server's memory is measured.
func BenchmarkSocketAtItsCap(b *testing.B) {
	const sockets = 10
	perSocket := config.Defaults().Subscriptions.PerSocket
	s := apitest.New(b)
	id := open(&testing.T{}, s, map[string]any{"tenant": "bench", "externalKey": "capped"}).OpenSession.Session.ID
	beforeHeap, beforeStack := serverMemorySplit()
	goroutines := runtimeGoroutines()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), cappedSocketsEnv+"="+strconv.Itoa(sockets), "SG_URL="+s.URL, "SG_KEY="+s.Key,
		"SG_SESSION="+id, "SG_PER_SOCKET="+strconv.Itoa(perSocket))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(out)
	require.True(b, lines.Scan())
	require.Equal(b, "ready", lines.Text())
	require.Eventually(b, func() bool { return s.ClientSubscriptions() >= sockets*perSocket }, time.Minute, 20*time.Millisecond,
		"not every subscription started")

	b.ResetTimer()
	heap, stack := serverMemorySplit()
	for range b.N {
		heap, stack = serverMemorySplit()
	}
	b.StopTimer()
	held := float64(heap+stack-beforeHeap-beforeStack) / sockets
	b.ReportMetric(held/1024, "KB/capped-socket")
	b.ReportMetric(held/float64(perSocket)/1024, "KB/sub")
	b.ReportMetric(float64(stack-beforeStack)/sockets/1024, "stack-KB/capped-socket")
	b.ReportMetric(float64(runtimeGoroutines()-goroutines)/sockets, "goroutines/capped-socket")
}

// runCappedSockets opens SG_CAPPED_SOCKETS sockets with SG_PER_SOCKET
// sessionEvents subscriptions each, prints "ready", and holds them until
// its stdin closes.
func runCappedSockets() int {
	url := "ws" + strings.TrimPrefix(os.Getenv("SG_URL"), "http") + "/graphql"
	sockets, _ := strconv.Atoi(os.Getenv(cappedSocketsEnv))
	perSocket, _ := strconv.Atoi(os.Getenv("SG_PER_SOCKET"))
	ctx := context.Background()
	for range sockets {
		conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			return 1
		}
		defer conn.CloseNow()
		_ = wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + os.Getenv("SG_KEY")}})
		var ack map[string]any
		if err := wsjson.Read(ctx, conn, &ack); err != nil || ack["type"] != "connection_ack" {
			fmt.Fprintln(os.Stderr, "connection_init:", ack, err)
			return 1
		}
		for i := range perSocket {
			_ = wsjson.Write(ctx, conn, map[string]any{"id": strconv.Itoa(i), "type": "subscribe", "payload": map[string]any{
				"query":     `subscription($id: ID!) { sessionEvents(sessionID: $id) { sequence } }`,
				"variables": map[string]any{"id": os.Getenv("SG_SESSION")}}})
		}
		// Answer the server's pings, so that it keeps the socket.
		go func() {
			for {
				if _, _, err := conn.Read(ctx); err != nil {
					return
				}
				_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`))
			}
		}()
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString(0) // until the benchmark closes it
	return 0
}

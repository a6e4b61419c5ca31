package wsproto_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/graph/wsproto"
)

// nodeDir holds the graphql-ws client script and its pinned npm dependencies.
const nodeDir = "testdata/node"

// nodeClient makes sure node and the pinned packages are there. A missing
// node or npm fails the test rather than skipping it, so CI cannot pass
// without the real client having run.
func nodeClient(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: this test runs the npm graphql-ws client against the server; install Node.js 20+ with npm", tool)
		}
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "graphql-ws", "package.json")); err == nil {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = nodeDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", nodeDir, err, out)
	}
}

// runNode runs client.mjs against url in mode and returns what it printed.
func runNode(t *testing.T, url, mode string, whileRunning func()) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", url, mode)
	cmd.Dir = nodeDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	if whileRunning != nil {
		whileRunning()
	}
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) || ctx.Err() != nil {
			t.Fatalf("node client.mjs %s: %v\nstdout: %s\nstderr: %s", mode, err, stdout.String(), stderr.String())
		}
		t.Fatalf("node client.mjs %s: %v", mode, err)
	}
	return strings.TrimSpace(stdout.String())
}

func TestGraphQLWSClientRunsOperations(t *testing.T) {
	nodeClient(t)
	subscribed := make(chan struct{}, 1)
	srv, url := serveAround(t, &wsproto.Transport{}, func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if graphql.GetOperationContext(ctx).Operation.Operation == ast.Subscription {
			subscribed <- struct{}{}
		}
		return next(ctx)
	})

	got := runNode(t, url, "operations", func() {
		select {
		case <-subscribed:
		case <-time.After(time.Minute):
			t.Error("the graphql-ws client never subscribed")
			return
		}
		for range 3 {
			srv.SendNextSubscriptionMessage()
		}
		srv.SendCompleteSubscriptionMessage()
	})

	want := `{"query":[{"data":{"name":"test"}}],` +
		`"invalid":[{"message":"Cannot query field \"nope\" on type \"Subscription\". Did you mean \"name\"?","locations":[{"line":1,"column":16}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}],` +
		`"subscription":[{"data":{"name":"test"}},{"data":{"name":"test"}},{"data":{"name":"test"}}]}`
	if got != want {
		t.Fatalf("graphql-ws client saw\n got: %s\nwant: %s", got, want)
	}
}

func TestGraphQLWSClientSeesRejectedInit(t *testing.T) {
	nodeClient(t)
	_, url := serve(t, &wsproto.Transport{
		Init: func(ctx context.Context, payload map[string]any) (context.Context, error) {
			return nil, errors.New("no token")
		},
	})
	got := runNode(t, url, "rejected", nil)
	if want := `{"code":4403,"reason":"Forbidden"}`; got != want {
		t.Fatalf("graphql-ws client saw\n got: %s\nwant: %s", got, want)
	}
}

// The graphql-ws client over Node's ws, which writes a large message whole
// before it reads again, sees 1009 for a message over ReadLimit every time,
// not a connection reset (1006).
func TestGraphQLWSClientSeesOversizeMessagesClose1009(t *testing.T) {
	nodeClient(t)
	_, url := serve(t, &wsproto.Transport{})
	got := runNode(t, url, "oversize", nil)
	if want := "[" + strings.Repeat("1009,", 19) + "1009]"; got != want {
		t.Fatalf("graphql-ws client saw close codes\n got: %s\nwant: %s", got, want)
	}
}

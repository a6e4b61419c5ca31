package graph_test

import (
	"os"
	"testing"

	"sessiongraph/internal/apitest"
)

// TestMain lets the subscriber benchmark re-run this binary as its client
// process (see subscribers_bench_test.go), so that the server's memory is
// measured without the clients' own (so does BenchmarkSocketAtItsCap), and tests run it as another replica
// (apitest.ReplicaProcess).
func TestMain(m *testing.M) {
	if os.Getenv(subscriberProcessEnv) != "" {
		os.Exit(runSubscriberProcess())
	}
	if os.Getenv(floodProcessEnv) != "" {
		os.Exit(runFloodProcess())
	}
	if os.Getenv(cappedSocketsEnv) != "" {
		os.Exit(runCappedSockets())
	}
	if apitest.ServeReplicaProcess() {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

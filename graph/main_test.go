package graph_test

import (
	"os"
	"testing"
)

// TestMain lets the subscriber benchmark re-run this binary as its client
// process (see subscribers_bench_test.go), so that the server's memory is
// measured without the clients' own.
func TestMain(m *testing.M) {
	if os.Getenv(subscriberProcessEnv) != "" {
		os.Exit(runSubscriberProcess())
	}
	os.Exit(m.Run())
}

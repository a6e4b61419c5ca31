// Command transports starts (or finds running) the checkout's PostgreSQL for
// `make test-transports`: a private cluster under .data/transports that
// listens on a Unix socket (trusted) and on a loopback port (password), and
// prints one line per transport, "tcp URL" and "unix URL", each a
// DATABASE_URL for its database "postgres".
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	"sessiongraph/internal/devdb"
)

func main() {
	dataDir := flag.String("data", ".data/transports", "the cluster's data directory")
	port := flag.Int("port", 0, "its TCP port on 127.0.0.1 (default: one derived from the data directory's path, 40000-49999)")
	flag.Parse()
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		fail(err)
	}
	if *port == 0 {
		// Two checkouts on one machine get different ports.
		h := fnv.New32a()
		h.Write([]byte(abs))
		*port = 40000 + int(h.Sum32()%10000)
	}
	c, err := devdb.Ensure(context.Background(), devdb.Options{DataDir: abs, Database: "postgres", TCPPort: *port})
	if err != nil {
		fail(err)
	}
	fmt.Println("tcp", c.TCPDSN)
	fmt.Println("unix", c.DSN)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "transports:", err)
	os.Exit(1)
}

package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/lib/pq"
)

// A test database is named after the host and the process that made it
// (sg_test_<host>_<pid>_<random>), so that when its drop fails (on Citus a
// worker's maintenance daemon can hold it past the cleanup's deadline under
// load) or its process is killed, the next test binary on the same host
// finds it and drops it: a leftover costs a run nothing and leaks nothing.

// hostTag is a short hash of this host's name: another host's test
// databases on a shared server are never this host's to sweep.
var hostTag = func() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}()

// testDatabaseName is a new test database's name for this process.
func testDatabaseName(random string) string {
	return fmt.Sprintf("sg_test_%s_%d_%s", hostTag, os.Getpid(), strings.ToLower(random))
}

// leftoverOf reports whether a database is a test database of this host
// whose process is gone.
func leftoverOf(name string) bool {
	rest, ok := strings.CutPrefix(name, "sg_test_"+hostTag+"_")
	if !ok {
		return false
	}
	pidText, _, ok := strings.Cut(rest, "_")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// dropLeftovers drops this host's test databases whose processes are gone,
// on every node (on Citus a worker may hold one the coordinator no longer
// has); a drop that fails is left for a later sweep.
func (s *server) dropLeftovers(ctx context.Context) (dropped []string) {
	nodes := []*sql.DB{s.admin}
	if s.citus != nil {
		for _, w := range s.citus.workers {
			nodes = append(nodes, w.db)
		}
	}
	var names []string
	for _, db := range nodes {
		rows, err := db.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'sg\_test\_%'`)
		if err != nil {
			continue
		}
		for rows.Next() {
			var name string
			if rows.Scan(&name) == nil && leftoverOf(name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		rows.Close()
	}
	for _, name := range names {
		if s.everyNode(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)") == nil {
			dropped = append(dropped, name)
		}
	}
	return dropped
}

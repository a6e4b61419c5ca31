package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/lib/pq"
)

// CitusEnv names the Citus coordinator that `make test-citus` runs the tests
// against (a postgres:// URL; its workers already added with
// citus_add_node). When it is set, every template and test database is made
// on the coordinator and on each worker under the same name, and a
// template's schema is distributed by the statements docs/scale-out.md
// prints, exactly as written there.
const CitusEnv = "TESTDB_CITUS_URL"

// cluster is a Citus cluster's nodes, as admin DSNs (database "postgres").
type cluster struct {
	coordinator string // host:port, for citus_set_coordinator_host
	workers     []node
}

type node struct {
	host string
	port int
	dsn  string
	db   *sql.DB
}

// citusCluster reads the workers of the coordinator at dsn from its
// metadata (in database "postgres", where they were added).
func citusCluster(ctx context.Context, admin *sql.DB, dsn string) (*cluster, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("%s must be a postgres:// URL", CitusEnv)
	}
	rows, err := admin.QueryContext(ctx, `SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND isactive ORDER BY nodeid`)
	if err != nil {
		return nil, fmt.Errorf("%s is not a Citus coordinator with workers: %w", CitusEnv, err)
	}
	defer rows.Close()
	c := &cluster{coordinator: u.Host}
	for rows.Next() {
		var n node
		if err := rows.Scan(&n.host, &n.port); err != nil {
			return nil, err
		}
		w := *u
		w.Host = net.JoinHostPort(n.host, strconv.Itoa(n.port))
		n.dsn = w.String()
		if n.db, err = sql.Open("postgres", n.dsn); err != nil {
			return nil, err
		}
		c.workers = append(c.workers, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(c.workers) == 0 {
		return nil, fmt.Errorf("the coordinator in %s has no workers: add them with citus_add_node", CitusEnv)
	}
	return c, nil
}

// everyNode runs an admin statement on the server and, on Citus, on every
// worker too.
func (s *server) everyNode(ctx context.Context, query string) error {
	if _, err := s.admin.ExecContext(ctx, query); err != nil {
		return err
	}
	if s.citus == nil {
		return nil
	}
	for _, w := range s.citus.workers {
		if _, err := w.db.ExecContext(ctx, query); err != nil {
			return fmt.Errorf("on worker %s:%d: %w", w.host, w.port, err)
		}
	}
	return nil
}

// prepareCitus makes a new, empty database a Citus database: the extension
// on every node, and the coordinator's metadata naming itself and the
// workers, as in the coordinator's database "postgres".
func (s *server) prepareCitus(ctx context.Context, name string) error {
	if s.citus == nil {
		return nil
	}
	dsns := []string{withDatabase(s.adminDSN, name)}
	for _, w := range s.citus.workers {
		dsns = append(dsns, withDatabase(w.dsn, name))
	}
	for _, dsn := range dsns {
		if err := execOn(ctx, dsn, `CREATE EXTENSION IF NOT EXISTS citus`); err != nil {
			return fmt.Errorf("create extension citus in %s: %w", name, err)
		}
	}
	host, port, err := net.SplitHostPort(s.citus.coordinator)
	if err != nil {
		return err
	}
	stmts := []string{fmt.Sprintf(`SELECT citus_set_coordinator_host(%s, %s)`, pq.QuoteLiteral(host), port)}
	for _, w := range s.citus.workers {
		stmts = append(stmts, fmt.Sprintf(`SELECT citus_add_node(%s, %d)`, pq.QuoteLiteral(w.host), w.port))
	}
	for _, q := range stmts {
		if err := execOn(ctx, dsns[0], q); err != nil {
			return fmt.Errorf("%s in %s: %w", q, name, err)
		}
	}
	return nil
}

// distribute runs docs/scale-out.md's distribution statements, as the doc
// prints them, in a migrated template on Citus. A template that holds no
// sessions table (a test that migrates for itself) stays local.
func (s *server) distribute(ctx context.Context, name string) error {
	if s.citus == nil {
		return nil
	}
	dsn := withDatabase(s.adminDSN, name)
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var migrated bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('public.sessions') IS NOT NULL`).Scan(&migrated); err != nil || !migrated {
		return err
	}
	stmts, err := ScaleOutStatements()
	if err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("docs/scale-out.md: %s: %w", q, err)
		}
	}
	return nil
}

// scaleOutBlock is the doc's block of distribution statements, after its
// marker line.
var scaleOutBlock = regexp.MustCompile("(?s)<!-- citus placement: migrations/citus_test.go -->\\s*```sql\\n(.*?)```")

// ScaleOutStatements returns the SQL statements of docs/scale-out.md's
// distribution block, in order, one per line as the doc prints them.
func ScaleOutStatements() ([]string, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "scale-out.md"))
	if err != nil {
		return nil, err
	}
	block := scaleOutBlock.FindSubmatch(doc)
	if block == nil {
		return nil, errors.New("docs/scale-out.md has no block of distribution statements after its marker line")
	}
	var out []string
	for _, line := range strings.Split(string(block[1]), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			out = append(out, line)
		}
	}
	return out, nil
}

func execOn(ctx context.Context, dsn, query string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, query)
	return err
}

// Citus reports whether the tests run on a Citus cluster (make test-citus).
func Citus() bool { return os.Getenv(CitusEnv) != "" }

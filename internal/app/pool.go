package app

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
)

// connsPerCore is how many pooled connections the pool opens per core the
// server may use. A durable commit waits for the WAL flush without using a
// core, and PostgreSQL flushes every commit that waits together (group
// commit), so more connections than cores keep the cores busy; far more
// only queue inside PostgreSQL.
const connsPerCore = 4

// replicasPerDatabase is how many replicas at full pool the default leaves
// room for in PostgreSQL's max_connections.
const replicasPerDatabase = 3

// poolSize is the default size of the connection pool: connsPerCore per
// core of this process, but no more than a replicasPerDatabase-th of the
// connections PostgreSQL accepts from ordinary users, and at least 2.
func poolSize(cores, maxConnections, reserved int) int {
	room := (maxConnections - reserved) / replicasPerDatabase
	return max(min(connsPerCore*cores, room), 2)
}

// sizePool sets the pool's size: n if positive, else poolSize of this
// machine and of the database's settings. It returns the size.
func sizePool(ctx context.Context, db *sql.DB, n int) (int, error) {
	if n <= 0 {
		var maxConns, reserved int
		err := db.QueryRowContext(ctx, `SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int`).
			Scan(&maxConns, &reserved)
		if err != nil {
			return 0, fmt.Errorf("reading max_connections: %w", err)
		}
		n = poolSize(runtime.GOMAXPROCS(0), maxConns, reserved)
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return n, nil
}

package testdb

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/lib/pq"
)

// LockTable takes an ACCESS EXCLUSIVE lock on table in the database dsn
// names, from a connection of its own, so that every statement reading the
// table waits, holding its connection, as a slow search does. waiting
// counts the statements waiting for it; unlock lets them go (it runs in
// t.Cleanup too).
//
// waiting counts this database's waiters only: pg_locks lists the locks of
// every database in the cluster, and the test databases, cloned from one
// template, give their tables the same OIDs, so a relation OID alone also
// counted the waiters of tests running beside this one.
func LockTable(t testing.TB, dsn, table string) (waiting func() int, unlock func()) {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	if _, err := tx.Exec(`LOCK TABLE ` + pq.QuoteIdentifier(table) + ` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatalf("testdb: locking %s: %v", table, err)
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			if err := tx.Rollback(); err != nil {
				t.Errorf("testdb: unlocking %s: %v", table, err)
			}
		})
	}
	t.Cleanup(unlock)
	waiting = func() int {
		var n int
		err := db.QueryRow(`SELECT count(*) FROM pg_locks
			WHERE NOT granted AND relation = $1::regclass
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, table).Scan(&n)
		if err != nil {
			t.Fatalf("testdb: counting the waiters on %s: %v", table, err)
		}
		return n
	}
	return waiting, unlock
}

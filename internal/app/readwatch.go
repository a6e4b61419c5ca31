package app

import (
	"github.com/jackc/pgx/v5"

	"sessiongraph/internal/readwatch"
)

// watchDetachedReads lets the pool's reads run detached from database/sql's
// watch of their context (readwatch): compiled pages do, which saves a
// goroutine a page.
func watchDetachedReads(conn *pgx.ConnConfig) { readwatch.Install(conn) }

package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"sessiongraph/internal/dbhook"
)

// Query runs a read's one statement on a connection of the pool through
// pgx, as a write's exchanges run (the same hook: outages, tracing, the
// round-trip counts), and hands its rows to rows, which must not keep them.
// It serves a read of many text values (graph/compiled's pages): pgx's raw
// values cost nothing per value, where database/sql's driver makes a string
// of each and boxes it. A context that readwatch detached reaches pgx as
// it is, so its statement is watched as a read through ent's is.
func (s *Store) Query(ctx context.Context, query string, args []any, rows func(pgx.Rows) error) error {
	return s.exchange(ctx, dbhook.Query, query, func(ctx context.Context) error {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("store: the pool's driver is %T, not pgx's stdlib", dc)
			}
			r, err := c.Conn().Query(ctx, query, args...)
			if err != nil {
				return err
			}
			defer r.Close()
			if err := rows(r); err != nil {
				return err
			}
			r.Close()
			return r.Err()
		})
	})
}

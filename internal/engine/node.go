package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/entitytype"
	"sessiongraph/ent/event"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/session"
	"sessiongraph/ent/stepresult"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/apperr"
)

// nodeTables are the tables whose rows are Relay nodes.
var nodeTables = []string{
	session.Table, turn.Table, ref.Table, artifact.Table, stepresult.Table, contextreceipt.Table, entitytype.Table, event.Table, apikey.Table,
}

// nodeTableQuery finds the table of each of a list of ids in one statement:
// node ids are plain UUIDs, so the type is looked up rather than encoded.
var nodeTableQuery = func() string {
	parts := make([]string, len(nodeTables))
	for i, t := range nodeTables {
		parts[i] = fmt.Sprintf("SELECT id, '%s' FROM %s WHERE id = ANY($1::uuid[])", t, t)
	}
	return strings.Join(parts, " UNION ALL ")
}()

// NodeTables returns the table holding each id that exists; unknown ids are
// absent from the map.
func (e *Engine) NodeTables(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	arr := make([]string, len(ids))
	for i, id := range ids {
		arr[i] = id.String()
	}
	rows, err := e.client.QueryContext(ctx, nodeTableQuery, pq.Array(arr))
	if err != nil {
		return nil, fmt.Errorf("node tables: %w", err)
	}
	defer rows.Close()
	out := make(map[uuid.UUID]string, len(ids))
	for rows.Next() {
		var id uuid.UUID
		var table string
		if err := rows.Scan(&id, &table); err != nil {
			return nil, err
		}
		out[id] = table
	}
	return out, rows.Err()
}

// Node returns the node with the id, or a NOT_FOUND error.
func (e *Engine) Node(ctx context.Context, id uuid.UUID) (ent.Noder, error) {
	nodes, err := e.Nodes(ctx, []uuid.UUID{id})
	if err != nil {
		return nil, err
	}
	return nodes[0], nil
}

// Nodes returns the nodes with the ids, in order. It looks every id's table
// up in one statement and then loads each table's rows in one more; an id
// that resolves to nothing gets a NOT_FOUND error at its index.
func (e *Engine) Nodes(ctx context.Context, ids []uuid.UUID) ([]ent.Noder, error) {
	tables, err := e.NodeTables(ctx, ids)
	if err != nil {
		return nil, err
	}
	return e.client.Noders(ctx, ids, ent.WithNodeType(func(_ context.Context, id uuid.UUID) (string, error) {
		if t, ok := tables[id]; ok {
			return t, nil
		}
		return "", apperr.New(apperr.NotFound, "no node has the id %s", id)
	}))
}

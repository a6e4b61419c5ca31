package engine

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/entitytype"
	"sessiongraph/ent/event"
	"sessiongraph/ent/modelcall"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/session"
	"sessiongraph/ent/stepresult"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// Node ids are plain UUIDs, so a node's type is looked up rather than read
// from its id. Sessions are looked up first, by id, which names their shard
// on Citus (docs/scale-out.md): a session's node costs one statement on one
// shard. Any other id is found in one statement over the other tables, which
// answers its session too, so that its row is then read on its session's
// shard.

// locateNodes finds the table and the session of each of a list of ids
// that are not sessions, in one statement.
var locateNodes = store.LocateNodes(store.NodeTables[1:])

// nodeLoaders read a table's nodes by id (and, for a session's rows, by
// session too), with the fields the query selects.
var nodeLoaders = map[string]func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error{
	turn.Table: func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.Turn.Query().Where(turn.IDIn(ids...), turn.SessionIDIn(sessions...)), "Turn", found, func(n *ent.Turn) uuid.UUID { return n.ID })
	},
	ref.Table: func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.Ref.Query().Where(ref.IDIn(ids...), ref.SessionIDIn(sessions...)), "Ref", found, func(n *ent.Ref) uuid.UUID { return n.ID })
	},
	artifact.Table: func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.Artifact.Query().Where(artifact.IDIn(ids...), artifact.SessionIDIn(sessions...)), "Artifact", found, func(n *ent.Artifact) uuid.UUID { return n.ID })
	},
	stepresult.Table: func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.StepResult.Query().Where(stepresult.IDIn(ids...), stepresult.SessionIDIn(sessions...)), "StepResult", found, func(n *ent.StepResult) uuid.UUID { return n.ID })
	},
	contextreceipt.Table: func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.ContextReceipt.Query().Where(contextreceipt.IDIn(ids...), contextreceipt.SessionIDIn(sessions...)), "ContextReceipt", found, func(n *ent.ContextReceipt) uuid.UUID { return n.ID })
	},
	modelcall.Table: func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.ModelCall.Query().Where(modelcall.IDIn(ids...), modelcall.SessionIDIn(sessions...)), "ModelCall", found, func(n *ent.ModelCall) uuid.UUID { return n.ID })
	},
	event.Table: func(ctx context.Context, c *ent.Client, ids, sessions []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.Event.Query().Where(event.IDIn(ids...), event.SessionIDIn(sessions...)), "Event", found, func(n *ent.Event) uuid.UUID { return n.ID })
	},
	entitytype.Table: func(ctx context.Context, c *ent.Client, ids, _ []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.EntityType.Query().Where(entitytype.IDIn(ids...)), "EntityType", found, func(n *ent.EntityType) uuid.UUID { return n.ID })
	},
	apikey.Table: func(ctx context.Context, c *ent.Client, ids, _ []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
		return collectNodes(ctx, c.APIKey.Query().Where(apikey.IDIn(ids...)), "APIKey", found, func(n *ent.APIKey) uuid.UUID { return n.ID })
	},
}

// nodeQuery is what collectNodes needs of an ent query.
type nodeQuery[T ent.Noder, Q any] interface {
	CollectFields(ctx context.Context, satisfies ...string) (Q, error)
	All(ctx context.Context) ([]T, error)
}

// collectNodes runs q with the fields the GraphQL query selects of
// typename (eager loads included), as ent's own node resolver does, and
// adds each row to found under its id.
func collectNodes[T ent.Noder, Q nodeQuery[T, Q]](ctx context.Context, q Q, typename string,
	found map[uuid.UUID]ent.Noder, id func(T) uuid.UUID) error {
	q, err := q.CollectFields(ctx, typename, "Node")
	if err != nil {
		return err
	}
	rows, err := q.All(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		found[id(r)] = r
	}
	return nil
}

// Node returns the node with the id, or a NOT_FOUND error.
func (rd *Reads) Node(ctx context.Context, id uuid.UUID) (ent.Noder, error) {
	nodes, errs, err := rd.Nodes(ctx, []uuid.UUID{id})
	if err != nil {
		return nil, err
	}
	return nodes[0], errs[0]
}

// Nodes returns the nodes with the ids, in order, and at each index where an
// id resolves to nothing visible to the caller, a NOT_FOUND error. err is
// for a failure of the whole read.
func (rd *Reads) Nodes(ctx context.Context, ids []uuid.UUID) (nodes []ent.Noder, errs []error, err error) {
	found := make(map[uuid.UUID]ent.Noder, len(ids))
	if err := rd.loadSessionNodes(ctx, ids, found); err != nil {
		return nil, nil, err
	}
	if err := rd.loadOtherNodes(ctx, ids, found); err != nil {
		return nil, nil, err
	}
	nodes, errs = make([]ent.Noder, len(ids)), make([]error, len(ids))
	for i, id := range ids {
		if nodes[i] = found[id]; nodes[i] == nil {
			errs[i] = apperr.New(apperr.NotFound, "no node has the id %s", id)
		}
	}
	return nodes, errs, nil
}

// loadSessionNodes adds to found the sessions among the ids. One id is
// read by ent's own node read, which limits each of the session's
// connections in SQL (its turns' first 10 read 10 rows); several are read
// together, each connection ranked per session.
func (rd *Reads) loadSessionNodes(ctx context.Context, ids []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
	if len(ids) == 1 {
		n, err := rd.client.Noder(ctx, ids[0], ent.WithFixedNodeType(session.Table))
		switch {
		case ent.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		found[ids[0]] = n
		return nil
	}
	sessions, err := rd.client.Session.Query().Where(session.IDIn(ids...)).CollectFields(ctx, "Session", "Node")
	if err != nil {
		return err
	}
	loaded, err := sessions.All(ctx)
	if err != nil {
		return err
	}
	for _, s := range loaded {
		found[s.ID] = s
	}
	return nil
}

// loadOtherNodes adds to found the nodes of the ids that are not sessions:
// one statement locates them, then one reads each table's rows.
func (rd *Reads) loadOtherNodes(ctx context.Context, ids []uuid.UUID, found map[uuid.UUID]ent.Noder) error {
	var rest []string
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			rest = append(rest, id.String())
		}
	}
	if len(rest) == 0 {
		return nil
	}
	rows, err := rd.client.QueryContext(ctx, locateNodes, pq.Array(rest))
	if err != nil {
		return fmt.Errorf("locate nodes: %w", err)
	}
	defer rows.Close()
	type located struct{ ids, sessions []uuid.UUID }
	byTable := map[string]*located{}
	for rows.Next() {
		var id uuid.UUID
		var sessionID uuid.NullUUID
		var table string
		if err := rows.Scan(&id, &table, &sessionID); err != nil {
			return err
		}
		l := byTable[table]
		if l == nil {
			l = &located{}
			byTable[table] = l
		}
		l.ids = append(l.ids, id)
		if sessionID.Valid {
			l.sessions = append(l.sessions, sessionID.UUID)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for table, l := range byTable {
		if err := nodeLoaders[table](ctx, rd.client, l.ids, l.sessions, found); err != nil {
			return err
		}
	}
	return nil
}

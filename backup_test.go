package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testdb"
)

// postgresTool finds one of PostgreSQL's client programs: Debian's
// versioned directories first (the same version as the server the tests
// start), then PATH.
func postgresTool(t *testing.T, name string) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if p := filepath.Join(dirs[i], name); isFile(p) {
			return p
		}
	}
	p, err := exec.LookPath(name)
	require.NoError(t, err, "%s is needed (Debian: apt-get install postgresql-client)", name)
	return p
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

const sessionState = `query($id: ID!) { session(id: $id) { turns { totalCount }
  events(last: 1, orderBy: [{field: SEQUENCE}]) { edges { node { sequence kind } } } } }`

type stateOut struct {
	Session struct {
		Turns  struct{ TotalCount int } `json:"turns"`
		Events struct {
			Edges []struct {
				Node struct {
					Sequence int    `json:"sequence"`
					Kind     string `json:"kind"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"events"`
	} `json:"session"`
}

// The backup and restore of docs/operations-data.md, as written: pg_dump
// of the database while the server serves, pg_restore --no-owner into an
// empty database, `sessiongraph migrate status`, then a server on the
// restored database. It holds the state at the backup's moment (the write
// after it is gone), the keys of then still work, and the session's event
// numbers go on from the backup's newest.
func TestABackupRestoresTheStateAtItsMoment(t *testing.T) {
	s := apitest.New(t)
	id := seedUserSession(t, s, "acme", "user-1", "before")
	var before stateOut
	s.MustDo(t, sessionState, map[string]any{"id": id}, &before)
	require.NotEmpty(t, before.Session.Events.Edges)
	newest := before.Session.Events.Edges[0].Node.Sequence

	dump := filepath.Join(t.TempDir(), "sessiongraph.dump")
	ctx := context.Background()
	out, err := exec.CommandContext(ctx, postgresTool(t, "pg_dump"), "--format=custom", "--file="+dump, "--dbname="+s.DSN).CombinedOutput()
	require.NoError(t, err, "pg_dump: %s", out)

	// A write after the backup: the restore does not have it.
	s.MustDo(t, `mutation($s: ID!) { beginTurn(input: {sessionID: $s, userMessage: "after the backup"}) { turn { number } } }`,
		map[string]any{"s": id}, nil)

	empty := testdb.New(t, func(context.Context, string) error { return nil }, "restore-target")
	out, err = exec.CommandContext(ctx, postgresTool(t, "pg_restore"), "--no-owner", "--dbname="+empty, dump).CombinedOutput()
	require.NoError(t, err, "pg_restore: %s", out)

	status, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+empty), "migrate", "status")
	require.Equal(t, 0, code, "migrate status on the restored database: %s %s", status, stderr)

	restored := apitest.Replica(t, empty).WithKey(s.AdminKey) // the key of before the backup
	var after stateOut
	restored.MustDo(t, sessionState, map[string]any{"id": id}, &after)
	assert.Equal(t, before.Session.Turns.TotalCount, after.Session.Turns.TotalCount)
	require.Len(t, after.Session.Events.Edges, 1)
	assert.Equal(t, newest, after.Session.Events.Edges[0].Node.Sequence, "the backup's newest event, not the write after it")

	// The session goes on from the backup's state: a turn begins, as the
	// event numbered after the backup's newest.
	restored.MustDo(t, `mutation($s: ID!) { beginTurn(input: {sessionID: $s, userMessage: "after the restore"}) { turn { number } } }`,
		map[string]any{"s": id}, nil)
	var next stateOut
	restored.MustDo(t, sessionState, map[string]any{"id": id}, &next)
	assert.Equal(t, newest+1, next.Session.Events.Edges[0].Node.Sequence)
	assert.Equal(t, "turn.began", next.Session.Events.Edges[0].Node.Kind)
	assert.Equal(t, before.Session.Turns.TotalCount+1, next.Session.Turns.TotalCount)
}

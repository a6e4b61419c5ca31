package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/access"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// Names with characters that do not show are refused when a key is made;
// a key stored with them before (straight into the table here) is listed
// with them escaped, so ESC and CR never reach the operator's terminal.
func TestKeyNamesNeverReachTheTerminalRaw(t *testing.T) {
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	env := binaryEnv("DATABASE_URL=" + dsn)
	for _, c := range []struct{ args []string }{
		{[]string{"-name", "ops\x1b[2J", "-role", "ADMIN"}},
		{[]string{"-name", "ops\rroot", "-role", "ADMIN"}},
		{[]string{"-name", "ops\u200b", "-role", "ADMIN"}},
		{[]string{"-name", "ops\u202e", "-role", "ADMIN"}},
		{[]string{"-name", "ops", "-role", "CLIENT", "-tenant", "acme\u2060"}},
		{[]string{"-name", strings.Repeat("n", 201), "-role", "ADMIN"}},
	} {
		out, stderr, code := runBinary(t, env, append([]string{"keys", "create"}, c.args...)...)
		assert.Equal(t, 1, code, "%q", c.args)
		assert.Empty(t, out, "%q", c.args)
		assert.Regexp(t, `^sessiongraph keys create: (name|tenant) (holds the invisible or control character U\+[0-9A-F]{4,} at byte \d+|is 201 bytes long)`, stderr, "%q", c.args)
	}
	_, stderr, code := runBinary(t, env, "keys", "create", "-name", "Zoë's runtime (prod)", "-role", "CLIENT", "-tenant", "café")
	require.Equal(t, 0, code, stderr)

	db, err := ent.Open("postgres", dsn)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.APIKey.Create().SetName("evil\x1b]0;pwned\x07\rname\\").SetRole(apikey.RoleClient).SetTenant("t\x1b[31m").
		SetHash("not a key").SetPrefix("sg_old").Save(access.System(context.Background()))
	require.NoError(t, err)

	list, stderr, code := runBinary(t, env, "keys", "list")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, list, "\x1b")
	assert.NotContains(t, list, "\r")
	assert.NotContains(t, list, "\x07")
	assert.Contains(t, list, `evil\x1b]0;pwned\a\rname\\`)
	assert.Contains(t, list, `t\x1b[31m`)
	assert.Contains(t, list, "Zoë's runtime (prod)")
	assert.Contains(t, list, "café")
}

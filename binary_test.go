package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// binaryPath is the sessiongraph binary TestMain builds once, so that these
// tests run the command an operator runs.
var binaryPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sessiongraph-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binaryPath = filepath.Join(dir, "sessiongraph")
	// Static, as the container image ships it (image_test.go puts this
	// binary in the image).
	build := exec.Command("go", "build", "-o", binaryPath, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binaryEnv is a clean environment: only PATH and HOME of ours, so no
// DATABASE_URL of the machine leaks in.
func binaryEnv(vars ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, vars...)
}

// runBinary runs sessiongraph to completion and returns its output and exit code.
func runBinary(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binaryPath, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run sessiongraph: %v", err)
	}
	return out.String(), errOut.String(), code
}

// served is a sessiongraph process serving until the test ends.
type served struct {
	url    string
	lines  []string // what it printed to stdout before it served
	stderr *lockedBuffer
}

// serveBinary starts sessiongraph and waits until it prints its URL.
func serveBinary(t *testing.T, env []string, args ...string) served {
	t.Helper()
	cmd := exec.Command(binaryPath, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	s := served{stderr: logs}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		s.lines = append(s.lines, lines.Text())
		if m := regexp.MustCompile(`serving at (http://127\.0\.0\.1:\d+)/`).FindStringSubmatch(lines.Text()); m != nil {
			s.url = m[1]
			go io.Copy(io.Discard, stdout)
			return s
		}
	}
	t.Fatalf("sessiongraph exited before serving; stdout: %q\nstderr: %s", s.lines, logs.String())
	return s
}

// status asks the server who the key is and returns the HTTP status.
func status(t *testing.T, url, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/graphql", strings.NewReader(`{"query":"{ viewer { role } }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

var keyPattern = regexp.MustCompile(`^sg_[A-Za-z0-9_-]{43}$`)

// An operator lost the admin key printed at the first start: the second
// start says how to make another, `keys create` makes it, `keys list` shows
// both, and `keys revoke` retires the lost one while the server runs.
func TestALostAdminKeyIsReplacedWithTheKeysCommands(t *testing.T) {
	env := binaryEnv("DATABASE_URL=" + testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	first := serveBinary(t, env, "-bootstrap-admin-key")
	require.Len(t, first.lines, 1, "the URL; the key went to stderr")
	lost := bootstrappedKey(t, first.stderr)

	second := serveBinary(t, env, "-bootstrap-admin-key")
	require.Len(t, second.lines, 2)
	assert.Equal(t, "an admin API key exists already (a key is shown only when it is created); lost it? make another: "+
		"sessiongraph keys create -role ADMIN -name <who it is for> (with the same DATABASE_URL)", second.lines[0])

	key, stderr, code := runBinary(t, env, "keys", "create", "-name", "ops on call", "-role", "admin")
	require.Equal(t, 0, code, stderr)
	key = strings.TrimSpace(key)
	require.Regexp(t, keyPattern, key, "stdout is the key alone, for KEY=$(sessiongraph keys create ...)")
	assert.Regexp(t, `^created ADMIN key "ops on call" \(id [0-9a-f-]{36}\); it is shown this once, only its hash is stored\n$`, stderr)
	assert.Equal(t, http.StatusOK, status(t, second.url, key))

	list, stderr, code := runBinary(t, env, "keys", "list")
	require.Equal(t, 0, code, stderr)
	rows := strings.Split(strings.TrimSpace(list), "\n")
	require.Len(t, rows, 3, list)
	assert.Regexp(t, `^ID +NAME +ROLE +TENANT +PREFIX +CREATED +LAST USED +REVOKED$`, rows[0])
	assert.Regexp(t, `^[0-9a-f-]{36}  ops on call +ADMIN  - +`+regexp.QuoteMeta(key[:9])+`  \S+Z +\S+ +-$`, rows[1], "newest first")
	assert.Regexp(t, `^[0-9a-f-]{36}  first admin key +ADMIN  - +`+regexp.QuoteMeta(lost[:9])+`  \S+Z +- +-$`, rows[2])
	assert.NotContains(t, list, lost[9:], "only the prefix of a key is ever shown")
	lostID := strings.Fields(rows[2])[0]

	out, stderr, code := runBinary(t, env, "keys", "revoke", lostID)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, fmt.Sprintf("revoked ADMIN key %q (id %s)\n", "first admin key", lostID), out)
	assert.Eventually(t, func() bool { return status(t, second.url, lost) == http.StatusUnauthorized }, 10*time.Second, 20*time.Millisecond,
		"the running server hears of the revocation")
	assert.Equal(t, http.StatusOK, status(t, second.url, key))

	list, _, _ = runBinary(t, env, "keys", "list")
	assert.Regexp(t, `first admin key +ADMIN  - +\S+  \S+Z +- +\S+Z\n$`, list, "the revoked key shows when")
}

func TestKeysCommandsRefuseBadInputWithAReason(t *testing.T) {
	env := binaryEnv("DATABASE_URL=" + testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"keys", "create", "-name", "x", "-role", "OWNER"}, 1, "sessiongraph keys create: role must be ADMIN, CLIENT or READER\n"},
		{[]string{"keys", "create", "-name", "x", "-role", "CLIENT"}, 1, "sessiongraph keys create: a CLIENT key belongs to one tenant: give tenant\n"},
		{[]string{"keys", "revoke", "sg_abcdef"}, 1, "sessiongraph keys revoke: \"sg_abcdef\" is not a key id: `sessiongraph keys list` shows them\n"},
		{[]string{"keys", "revoke", "00000000-0000-4000-8000-000000000000"}, 1, "sessiongraph keys revoke: revoke 00000000-0000-4000-8000-000000000000: API key 00000000-0000-4000-8000-000000000000 not found\n"},
		{[]string{"keys", "rotate"}, 2, "sessiongraph keys: unknown command \"rotate\"\n" + keysUsage + "\n"},
	} {
		out, stderr, code := runBinary(t, env, c.args...)
		assert.Equal(t, c.code, code, c.args)
		assert.Equal(t, c.stderr, stderr, c.args)
		assert.Empty(t, out, c.args)
	}
	list, _, _ := runBinary(t, env, "keys", "list")
	assert.Equal(t, 1, strings.Count(list, "\n"), "no key was created: only the header")
}

// The binary never guesses a database: without DATABASE_URL it refuses to
// start unless told -dev.
func TestWithoutADatabaseURLTheServerRefusesToStart(t *testing.T) {
	for _, args := range [][]string{nil, {"keys", "list"}} {
		out, stderr, code := runBinary(t, binaryEnv(), args...)
		assert.Equal(t, 2, code)
		assert.Empty(t, out)
		prefix := "sessiongraph: "
		if len(args) > 0 {
			prefix = "sessiongraph keys: "
		}
		assert.Equal(t, prefix+"no database: set DATABASE_URL (or -database-url) to a PostgreSQL URL, "+
			"or pass -dev to use this checkout's own development database under -data-dir (make run does)\n", stderr)
	}
}

// A malformed environment value stops the start, naming the variable and
// its value, instead of being silently replaced by the default.
func TestAMalformedSettingStopsTheStart(t *testing.T) {
	out, stderr, code := runBinary(t, binaryEnv("DATABASE_URL=postgres://unused", "SESSION_TTL=24", "MAX_DEPTH=abc", "INTROSPECTION=maybe"))
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, `sessiongraph: environment variable INTROSPECTION="maybe": use true or false
environment variable SESSION_TTL="24": use a duration with a unit, such as 90s, 15m or 24h
environment variable MAX_DEPTH="abc": use a whole number
`, stderr)

	_, stderr, code = runBinary(t, binaryEnv("DATABASE_URL=postgres://unused"), "-max-depth", "0")
	assert.Equal(t, 2, code)
	assert.Equal(t, "sessiongraph: -max-depth (MAX_DEPTH) must be above zero\n", stderr)
}

// Package clients_test runs each client's own test suite against a real
// server: the Python client's pytest here (clients/python/tests), the
// TypeScript client's node tests in typescript_test.go.
package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sessiongraph/internal/apitest"
)

// pythonInterpreter is Debian's python3, whose httpx, websockets and pytest
// come from apt: the client depends on nothing else.
const pythonInterpreter = "/usr/bin/python3"

// pythonRequire fails (never skips) when the interpreter or a module the
// client's tests need is missing, naming the Debian packages to install.
func pythonRequire(t *testing.T) {
	t.Helper()
	const hint = "apt-get install python3 python3-httpx python3-websockets python3-pytest python3-pip python3-venv"
	if _, err := os.Stat(pythonInterpreter); err != nil {
		t.Fatalf("%s is missing; the Python client's tests need Debian's python3: %s", pythonInterpreter, hint)
	}
	// pip, setuptools and wheel: the tests install the client as its README says.
	const find = `import importlib.util as u, sys
missing = [m for m in ("httpx", "websockets", "pytest", "pip", "setuptools", "wheel", "venv") if u.find_spec(m) is None]
sys.exit("missing: " + ", ".join(missing) if missing else 0)`
	out, err := exec.Command(pythonInterpreter, "-c", find).CombinedOutput()
	if err != nil {
		t.Fatalf("the Python client's tests need Debian's httpx, websockets, pytest and pip (%s): %s\n%s", hint, err, out)
	}
}

// pytest over clients/python/tests, against a real server: SG_URL, an ADMIN
// key, a CLIENT key of tenant acme and a CLIENT key of tenant other.
func TestPythonClient(t *testing.T) {
	pythonRequire(t)
	s := apitest.New(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pythonInterpreter, "-m", "pytest", "-q", "-p", "no:cacheprovider", "clients/python/tests")
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"PYTHONDONTWRITEBYTECODE=1",
		"SG_URL="+s.URL,
		"SG_ADMIN_KEY="+s.AdminKey,
		"SG_KEY="+s.NewKey(t, "CLIENT", "acme"),
		"SG_OTHER_KEY="+s.NewKey(t, "CLIENT", "other"),
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pytest clients/python/tests failed (%v):\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Log(lines[len(lines)-1])
}

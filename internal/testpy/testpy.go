// Package testpy makes the Python environments the tests run clients in: a
// fresh venv made by Debian's python3, with everything else installed from
// PyPI at the versions clients/python/constraints.txt pins. Nothing is taken
// from the system's own site-packages, so a test passes on a machine set up
// as the README says and nowhere only by luck.
package testpy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Interpreter is Debian's python3: it only makes the venv.
const Interpreter = "/usr/bin/python3"

// Venv makes a venv in a temporary folder, installs args into it with pip
// (pinned by constraints, a constraints file) and answers its python.
func Venv(t testing.TB, constraints string, args ...string) (python string) {
	t.Helper()
	if _, err := os.Stat(Interpreter); err != nil {
		t.Fatalf("%s is missing; the tests make a venv with Debian's python3: apt-get install python3 python3-venv", Interpreter)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	Run(t, "", 2*time.Minute, nil, Interpreter, "-m", "venv", venv)
	python = filepath.Join(venv, "bin", "python")
	Run(t, "", 5*time.Minute, []string{"PIP_CONSTRAINT=" + constraints}, python,
		append([]string{"-m", "pip", "install", "-q"}, args...)...)
	return python
}

// Run runs name in dir (the test's working directory when empty) with env
// added to the test's own, fails the test when it fails, and answers what
// it printed. pip's version check and Python's bytecode files are off.
func Run(t testing.TB, dir string, timeout time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

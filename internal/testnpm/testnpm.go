// Package testnpm lets test binaries share an npm package's directory.
// go test runs packages' binaries at once, and two that install or build
// the same package (the root package's deploy test and the clients
// package both build clients/typescript) would remove each other's files:
// two npm ci in one fresh directory fail with ENOTEMPTY.
package testnpm

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Locked runs fn holding dir's lock, which one process at a time holds
// (flock on dir/.npm-test.lock; the kernel releases it when a process
// dies, so a killed test never leaves it held).
func Locked(t testing.TB, dir string, fn func()) {
	t.Helper()
	f := lock(t, dir, syscall.LOCK_EX)
	defer f.Close()
	fn()
}

// Using holds dir's lock shared until t ends, for a test that runs what
// another binary may rebuild (a build removes dist/ first): Locked waits
// for every user to finish, users wait for a build to finish, and users
// do not wait for each other.
func Using(t testing.TB, dir string) {
	t.Helper()
	f := lock(t, dir, syscall.LOCK_SH)
	t.Cleanup(func() { f.Close() })
}

// lock opens dir's lock file and takes it as how says; closing the file
// releases it.
func lock(t testing.TB, dir string, how int) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, ".npm-test.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		require.NoError(t, err, "locking %s", dir)
	}
	return f
}

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
	f, err := os.OpenFile(filepath.Join(dir, ".npm-test.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX), "locking %s", dir)
	defer func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }()
	fn()
}

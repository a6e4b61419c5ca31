package apitest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium finds the browser the browser tests drive: $CHROMIUM, else the
// first Chromium or Chrome on PATH. Its absence fails the test: the pages'
// acceptance is those tests, so they never skip.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is not installed, and the browser tests need it: " +
		"install it (Debian: apt-get install chromium) or set CHROMIUM to the browser's path")
	return ""
}

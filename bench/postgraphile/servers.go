package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is a server the comparison started: its pid (for its CPU time in
// /proc) and its GraphQL endpoint.
type process struct {
	Name string
	URL  string
	cmd  *exec.Cmd
	log  *os.File
}

// buildSessiongraph builds this checkout's server binary into dir.
func buildSessiongraph(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "sessiongraph")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = repo
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build: %w", err)
	}
	return bin, nil
}

// wholeReplica are the server flags that give the comparison's one API key
// the whole replica, as make load -whole-replica does: the per-key and
// per-tenant limits are for sharing a replica among clients, and
// PostGraphile has none.
var wholeReplica = []string{
	"-key-rate", "1000000", "-key-burst", "1000000", "-tenant-rate", "1000000", "-tenant-burst", "1000000",
	"-key-in-flight", "1000", "-tenant-in-flight", "1000", "-key-pool-share", "100", "-tenant-pool-share", "100",
	"-operations", "64", "-key-operations", "64",
}

// startSessiongraph serves dsn with the built binary on a free loopback
// port, its output in logPath.
func startSessiongraph(ctx context.Context, bin, dsn, logPath string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-database-url", dsn, "-listen", "127.0.0.1:" + strconv.Itoa(port), "-log-level", "warn"}, wholeReplica...)
	p, err := startProcess("sessiongraph", logPath, bin, args, "")
	if err != nil {
		return nil, err
	}
	p.URL = fmt.Sprintf("http://127.0.0.1:%d/graphql", port)
	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	return p, waitReady(ctx, p, ready, func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
		return http.DefaultClient.Do(req)
	})
}

// startPostGraphile serves dsn with PostGraphile (server.mjs) under the
// Node of bench/postgraphile/node_modules on a free loopback port, its
// output in logPath.
func startPostGraphile(ctx context.Context, benchDir, dsn, logPath string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	node := filepath.Join(benchDir, "node_modules", ".bin", "node")
	p, err := startProcess("postgraphile", logPath, node, []string{"server.mjs", dsn, strconv.Itoa(port)}, benchDir)
	if err != nil {
		return nil, err
	}
	p.URL = fmt.Sprintf("http://127.0.0.1:%d/graphql", port)
	return p, waitReady(ctx, p, p.URL, func(ctx context.Context) (*http.Response, error) {
		return http.Post(p.URL, "application/json", strings.NewReader(`{"query":"{__typename}"}`))
	})
}

// startProcess starts bin in dir with its output in logPath.
func startProcess(name, logPath, bin string, args []string, dir string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "NODE_ENV=production", "GRAPHILE_ENV=production")
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &process{Name: name, cmd: cmd, log: f}, nil
}

// waitReady asks probe until it answers 200, for at most a minute.
func waitReady(ctx context.Context, p *process, url string, probe func(context.Context) (*http.Response, error)) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := probe(ctx); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.cmd.ProcessState != nil {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	p.stop()
	return fmt.Errorf("%s did not answer %s within a minute (its log: %s)", p.Name, url, p.log.Name())
}

// stop ends the process (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (p *process) stop() {
	if p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	p.log.Close()
}

// pid is the process's id, for /proc.
func (p *process) pid() int { return p.cmd.Process.Pid }

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ensureNodeModules installs PostGraphile and Node 22 into benchDir from
// package-lock.json (npm ci) unless the installed tree already matches it.
func ensureNodeModules(ctx context.Context, benchDir string, log *slog.Logger) error {
	want, err := os.ReadFile(filepath.Join(benchDir, "package-lock.json"))
	if err != nil {
		return err
	}
	stamp := filepath.Join(benchDir, "node_modules", ".package-lock.json")
	have, _ := os.ReadFile(stamp)
	node := filepath.Join(benchDir, "node_modules", ".bin", "node")
	if len(have) > 0 && sameLockedVersions(want, have) && nodeVersion(ctx, node) != "" {
		return nil
	}
	log.Info("installing PostGraphile and Node 22 (npm ci)", "dir", benchDir)
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = benchDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w", benchDir, err)
	}
	if v := nodeVersion(ctx, node); !strings.HasPrefix(v, "v22.") {
		return fmt.Errorf("%s is %q after npm ci, want v22 (its preinstall script fetches the binary: was it allowed?)", node, v)
	}
	return nil
}

// sameLockedVersions reports whether npm's record of the installed tree
// (node_modules/.package-lock.json) names every "version" line the
// committed lock does.
func sameLockedVersions(lock, installed []byte) bool {
	versions := func(b []byte) map[string]bool {
		m := map[string]bool{}
		s := bufio.NewScanner(strings.NewReader(string(b)))
		for s.Scan() {
			if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, `"version":`) || strings.HasPrefix(line, `"integrity":`) {
				m[line] = true
			}
		}
		return m
	}
	have := versions(installed)
	for line := range versions(lock) {
		if !have[line] {
			return false
		}
	}
	return true
}

// nodeVersion is `node --version`, or "" when it does not run.
func nodeVersion(ctx context.Context, node string) string {
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

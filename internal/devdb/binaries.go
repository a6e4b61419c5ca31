package devdb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// binaries is a directory holding initdb and pg_ctl.
type binaries struct{ dir string }

// osUser is the account a private cluster runs as.
type osUser struct{ uid, gid uint32 }

// findBinaries picks the PostgreSQL binaries for dataDir: the version that
// initialised it if known, else pg_config's, else the newest Debian install,
// else whatever is on PATH.
func findBinaries(dataDir string) (binaries, error) {
	var dirs []string
	if v, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		dirs = append(dirs, filepath.Join("/usr/lib/postgresql", strings.TrimSpace(string(v)), "bin"))
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	dirs = append(dirs, debianBinDirs()...)
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) {
			return binaries{dir: d}, nil
		}
	}
	return binaries{}, ErrNoPostgres
}

// debianBinDirs lists /usr/lib/postgresql/<version>/bin, newest version first.
func debianBinDirs() []string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(dir string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	slices.SortFunc(matches, func(a, b string) int {
		switch va, vb := version(a), version(b); {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	return matches
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// clusterOwner is who must run PostgreSQL: it refuses to run as root, so root
// hands the cluster to the postgres account; anyone else runs it as themselves.
func clusterOwner() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w (as root it must run as the postgres user, and there is none)", ErrNoPostgres)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &osUser{uid: uint32(uid), gid: uint32(gid)}, nil
}

// canReach reports whether owner can traverse every directory down to dir,
// asking the kernel as that user rather than second-guessing modes and ACLs.
func (u *osUser) canReach(dir string) bool {
	if u == nil {
		return true
	}
	cmd := exec.Command("test", "-x", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid}}
	return cmd.Run() == nil
}

// chown hands path to owner; a nil owner means we already own it.
func (u *osUser) chown(path string) error {
	if u == nil {
		return nil
	}
	return os.Chown(path, int(u.uid), int(u.gid))
}

// run executes one of the binaries as owner and returns its combined output.
func (b binaries) run(ctx context.Context, owner *osUser, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(b.dir, name), args...)
	// Our working directory may be closed to the postgres account.
	cmd.Dir = "/"
	if owner != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: owner.uid, Gid: owner.gid}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

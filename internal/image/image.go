// Package image builds sessiongraph's container image without a Docker
// daemon: one layer with the static binary, a non-root user and nothing
// else (no shell, no package manager), and a config that names the
// entrypoint, the port and a healthcheck the binary answers itself.
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts: where the binary lives, who runs it, the port.
const (
	// Binary is the path of the server in the image.
	Binary = "/usr/local/bin/sessiongraph"
	// UID and GID run the server: not root, and no other account exists
	// but root's, which nothing uses.
	UID = 65532
	GID = 65532
	// User is the config's user, numeric so that a runtime needs no
	// passwd lookup to enforce runAsNonRoot.
	User = "65532:65532"
	// Port is the port the server listens on in the image.
	Port = "8080/tcp"
	// ListenAddr is the address the server listens on in the image: every
	// interface, since the container's network is its boundary.
	ListenAddr = "0.0.0.0:8080"
)

// Healthcheck runs the binary's healthcheck subcommand, which GETs
// /readyz: the image has no shell and no curl to run anything else.
var Healthcheck = &v1.HealthConfig{
	Test:        []string{"CMD", Binary, "healthcheck"},
	Interval:    10 * time.Second,
	Timeout:     3 * time.Second,
	StartPeriod: 30 * time.Second,
	Retries:     3,
}

// epoch dates every file and the image itself, so that the same binary
// always makes the same image.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options say what goes into the image.
type Options struct {
	// Binary is a statically linked (CGO_ENABLED=0) sessiongraph for linux.
	Binary string
	// Arch is the binary's GOARCH.
	Arch string
	// Version labels the image.
	Version string
	// CACertificates, when set, is a CA bundle for TLS to PostgreSQL
	// (sslmode=verify-full), copied to /etc/ssl/certs/ca-certificates.crt.
	CACertificates string
}

// Build makes the image.
func Build(o Options) (v1.Image, error) {
	layer, err := rootfs(o)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", o.Arch, v1.Time{Time: epoch}
	cf.Config = v1.Config{
		User:         User,
		Entrypoint:   []string{Binary},
		Env:          []string{"LISTEN_ADDR=" + ListenAddr, "HOME=/home/sessiongraph"},
		ExposedPorts: map[string]struct{}{Port: {}},
		Healthcheck:  Healthcheck,
		WorkingDir:   "/home/sessiongraph",
		StopSignal:   "SIGTERM",
		Labels: map[string]string{
			"org.opencontainers.image.title":   "sessiongraph",
			"org.opencontainers.image.version": o.Version,
		},
	}
	return mutate.ConfigFile(img, cf)
}

// MaxBinarySize bounds the stripped binary (-s -w, -trimpath): 57 MB when
// this was written, 76 MB unstripped.
const MaxBinarySize = 60_000_000

// BuildBinary compiles this checkout's server for linux/arch into out: static
// (CGO_ENABLED=0), without build paths (-trimpath), the symbol table and DWARF
// (-ldflags '-s -w'); panics still print their stack traces.
func BuildBinary(out, arch string) error {
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, b)
	}
	return nil
}

// Write writes img to path as a tarred OCI image layout (oci-layout,
// index.json, blobs/sha256/...), which docker load (Docker 25 and later) and
// podman load take. The index names the image as both read it: containerd's
// io.containerd.image.name (the full name) and the OCI ref.name (the tag).
func Write(path, tag string, img v1.Image) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("image tag %q: %w", tag, err)
	}
	registry := ref.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	dir, err := os.MkdirTemp("", "sessiongraph-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          registry + "/" + ref.RepositoryStr() + ":" + ref.TagStr(),
		"org.opencontainers.image.ref.name": ref.TagStr(),
	})); err != nil {
		return err
	}
	return tarDir(path, dir)
}

// tarDir writes dir's files to path as a tar, in name order and dated epoch,
// so that the same image always makes the same file.
func tarDir(path, dir string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, p := range names {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: epoch, Typeflag: tar.TypeReg, Size: info.Size(), Format: tar.FormatPAX}
		if info.IsDir() {
			h.Name, h.Mode, h.Typeflag, h.Size = h.Name+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if _, err := tw.Write(b); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// entry is one file or directory of the layer.
type entry struct {
	name     string
	mode     int64
	uid, gid int
	body     []byte // nil for a directory
}

// rootfs is the image's one layer.
func rootfs(o Options) (v1.Layer, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("the binary: %w", err)
	}
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, body: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\nsessiongraph:x:65532:65532:sessiongraph:/home/sessiongraph:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, body: []byte("root:x:0:\nsessiongraph:x:65532:\n")},
		{name: "home/", mode: 0o755},
		{name: "home/sessiongraph/", mode: 0o700, uid: UID, gid: GID},
		{name: "tmp/", mode: 0o1777},
		{name: "usr/", mode: 0o755},
		{name: "usr/local/", mode: 0o755},
		{name: "usr/local/bin/", mode: 0o755},
		{name: Binary[1:], mode: 0o755, body: bin},
	}
	if o.CACertificates != "" {
		certs, err := os.ReadFile(o.CACertificates)
		if err != nil {
			return nil, fmt.Errorf("the CA certificates: %w", err)
		}
		entries = append(entries, entry{name: "etc/ssl/", mode: 0o755}, entry{name: "etc/ssl/certs/", mode: 0o755},
			entry{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: certs})
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: epoch, Format: tar.FormatPAX}
		if e.body == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

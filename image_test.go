package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/image"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// The image make image builds, read back from its tarred OCI layout: an
// index (index.json) naming the tag, whose manifest names the config and the
// layer, every blob under its verified digest; a stripped binary under
// image.MaxBinarySize; a config with a non-root user, the entrypoint, the port
// and a healthcheck that needs no shell; one layer with the static binary and
// no shell; and that binary, taken out of the layer, serves a database until
// /readyz answers, and the healthcheck as the config gives it says so.
func TestTheImageRunsItsBinaryUntilReady(t *testing.T) {
	stripped := filepath.Join(t.TempDir(), "sessiongraph")
	require.NoError(t, image.BuildBinary(stripped, runtime.GOARCH))
	st, err := os.Stat(stripped)
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(image.MaxBinarySize), "the stripped binary")
	sym, err := elf.Open(stripped)
	require.NoError(t, err)
	_, err = sym.Symbols()
	require.ErrorIs(t, err, elf.ErrNoSymbols, "-ldflags -s strips the symbol table")
	require.Nil(t, sym.Section(".debug_info"), "-ldflags -w drops DWARF")
	sym.Close()

	tarPath := filepath.Join(t.TempDir(), "sessiongraph.tar")
	built, err := image.Build(image.Options{Binary: stripped, Arch: runtime.GOARCH, Version: "test"})
	require.NoError(t, err)
	require.NoError(t, image.Write(tarPath, "sessiongraph:test", built))

	// The tar holds an OCI image layout and nothing else.
	files := map[string][]byte{}
	f, err := os.Open(tarPath)
	require.NoError(t, err)
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			require.NoError(t, err)
			files[h.Name] = b
		}
	}
	f.Close()
	require.JSONEq(t, `{"imageLayoutVersion": "1.0.0"}`, string(files["oci-layout"]))
	blob := func(d v1.Descriptor) []byte {
		t.Helper()
		b, ok := files["blobs/sha256/"+d.Digest.Hex]
		require.True(t, ok, "no blob %s", d.Digest)
		require.Equal(t, "sha256", d.Digest.Algorithm)
		require.Equal(t, d.Digest.Hex, fmt.Sprintf("%x", sha256.Sum256(b)), "blob %s", d.Digest)
		require.Equal(t, d.Size, int64(len(b)), "blob %s", d.Digest)
		return b
	}
	var index v1.IndexManifest
	require.NoError(t, json.Unmarshal(files["index.json"], &index))
	assert.Equal(t, int64(2), index.SchemaVersion)
	require.Len(t, index.Manifests, 1)
	desc := index.Manifests[0]
	assert.Equal(t, types.OCIManifestSchema1, desc.MediaType)
	assert.Equal(t, map[string]string{"io.containerd.image.name": "docker.io/library/sessiongraph:test",
		"org.opencontainers.image.ref.name": "test"}, desc.Annotations, "docker load and podman load tag it")
	digest, err := built.Digest()
	require.NoError(t, err)
	assert.Equal(t, digest, desc.Digest)
	var manifest v1.Manifest
	require.NoError(t, json.Unmarshal(blob(desc), &manifest))
	assert.Equal(t, types.OCIManifestSchema1, manifest.MediaType)
	assert.Equal(t, types.OCIConfigJSON, manifest.Config.MediaType)
	blob(manifest.Config)
	require.Len(t, manifest.Layers, 1)
	assert.Equal(t, types.OCILayer, manifest.Layers[0].MediaType)
	blob(manifest.Layers[0])
	assert.Len(t, files, 5, "oci-layout, index.json, the manifest, the config and the layer: %v", files)

	dir := t.TempDir()
	for name, b := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	lp, err := layout.FromPath(dir)
	require.NoError(t, err)
	img, err := lp.Image(desc.Digest)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "linux", cf.OS)
	assert.Equal(t, runtime.GOARCH, cf.Architecture)
	assert.Equal(t, "65532:65532", cf.Config.User)
	assert.Equal(t, []string{"/usr/local/bin/sessiongraph"}, cf.Config.Entrypoint)
	assert.Equal(t, map[string]struct{}{"8080/tcp": {}}, cf.Config.ExposedPorts)
	assert.Equal(t, []string{"LISTEN_ADDR=0.0.0.0:8080", "HOME=/home/sessiongraph"}, cf.Config.Env)
	require.NotNil(t, cf.Config.Healthcheck)
	assert.Equal(t, []string{"CMD", "/usr/local/bin/sessiongraph", "healthcheck"}, cf.Config.Healthcheck.Test)
	assert.Equal(t, 10*time.Second, cf.Config.Healthcheck.Interval)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)

	// The filesystem: these entries and nothing else (no shell, no tools).
	bin := filepath.Join(t.TempDir(), "sessiongraph")
	fs := mutate.Extract(img)
	defer fs.Close()
	tr = tar.NewReader(fs)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		if h.Name == "usr/local/bin/sessiongraph" {
			assert.Equal(t, int64(0o755), h.Mode)
			assert.Equal(t, 0, h.Uid, "root owns the binary; the server's user cannot change it")
			f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			require.NoError(t, err)
			_, err = io.Copy(f, tr)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}
	}
	sort.Strings(names)
	want := []string{"etc", "etc/group", "etc/passwd", "home", "home/sessiongraph", "tmp", "usr", "usr/local", "usr/local/bin", "usr/local/bin/sessiongraph"}
	assert.Equal(t, want, names)
	got, err := os.ReadFile(bin)
	require.NoError(t, err)
	orig, err := os.ReadFile(stripped)
	require.NoError(t, err)
	require.True(t, bytes.Equal(orig, got), "the layer holds the binary byte for byte")
	exe, err := elf.Open(bin)
	require.NoError(t, err)
	for _, p := range exe.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "a static binary has no dynamic loader")
	}
	exe.Close()

	// Before the server listens, the healthcheck fails.
	health := func(listen string) (string, int) {
		cmd := exec.Command(bin, cf.Config.Healthcheck.Test[2:]...)
		cmd.Env = binaryEnv("LISTEN_ADDR=" + listen)
		out, err := cmd.CombinedOutput()
		if exit := (*exec.ExitError)(nil); err != nil {
			require.ErrorAs(t, err, &exit)
			return string(out), exit.ExitCode()
		}
		return string(out), 0
	}
	_, code := health("0.0.0.0:1")
	assert.Equal(t, 1, code)

	// The binary out of the layer, with the image's environment and a test
	// database, on a free port instead of 8080.
	env := binaryEnv(append(cf.Config.Env, "DATABASE_URL="+testdb.New(t, migrations.Apply, migrations.Fingerprint()))...)
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	var addr string
	lines := bufio.NewScanner(stdout)
	for addr == "" && lines.Scan() {
		if m := regexp.MustCompile(`serving at http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	require.NotEmpty(t, addr, "the binary exited before serving: %s", logs.String())
	go io.Copy(io.Discard, stdout)
	assert.Eventually(t, func() bool {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "/readyz answers 200")

	out, code := health(strings.Replace(addr, "127.0.0.1", "0.0.0.0", 1))
	assert.Equal(t, 0, code, out)
	assert.Equal(t, "http://"+addr+"/readyz: ready\n", out)
}

// lockedBuffer collects a running process's output, readable meanwhile.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

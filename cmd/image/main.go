// Command image builds sessiongraph's container image into a tarball that
// `docker load` takes, without a Docker daemon (internal/image; make image).
//
//	go run ./cmd/image -o sessiongraph-image.tar -tag sessiongraph:dev
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"sessiongraph/internal/image"
)

func main() {
	out := flag.String("o", "sessiongraph-image.tar", "the tarball to write")
	tag := flag.String("tag", "sessiongraph:dev", "the image's name and tag")
	binary := flag.String("binary", "", "a static linux sessiongraph binary; built from this checkout (CGO_ENABLED=0) when empty")
	arch := flag.String("arch", runtime.GOARCH, "the image's architecture (GOARCH)")
	version := flag.String("version", "dev", "the version label")
	ca := flag.String("ca", "/etc/ssl/certs/ca-certificates.crt", "a CA bundle to ship for TLS to PostgreSQL; empty ships none")
	flag.Parse()
	if err := run(*out, *tag, *binary, *arch, *version, *ca); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(out, tag, binary, arch, version, ca string) error {
	if binary == "" {
		dir, err := os.MkdirTemp("", "sessiongraph-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "sessiongraph")
		build := exec.Command("go", "build", "-trimpath", "-o", binary, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	if _, err := os.Stat(ca); ca != "" && err != nil {
		fmt.Fprintf(os.Stderr, "image: no CA bundle at %s: the image ships none (TLS to PostgreSQL with sslmode=verify-full will need one)\n", ca)
		ca = ""
	}
	img, err := image.Build(image.Options{Binary: binary, Arch: arch, Version: version, CACertificates: ca})
	if err != nil {
		return err
	}
	if err := image.Write(out, tag, img); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (%s, %s): docker load -i %s\n", out, tag, digest, out)
	return nil
}

// Command image builds sessiongraph's container image into a tarred OCI image
// layout that `docker load` (Docker 25+) and `podman load` take, without a
// Docker daemon (internal/image; make image). The binary is stripped.
//
//	go run ./cmd/image -o sessiongraph-image.tar -tag sessiongraph:dev
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"sessiongraph/internal/image"
)

func main() {
	out := flag.String("o", "sessiongraph-image.tar", "the tarred OCI image layout to write")
	tag := flag.String("tag", "sessiongraph:dev", "the image's name and tag")
	binary := flag.String("binary", "", "a static linux sessiongraph binary; built from this checkout (CGO_ENABLED=0, -trimpath, -ldflags '-s -w') when empty")
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
		if err := image.BuildBinary(binary, arch); err != nil {
			return err
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

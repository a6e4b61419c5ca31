package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"sessiongraph/internal/config"
)

// healthcheckCommand GETs the server's /readyz and exits 0 when it answers
// 200: the container image's healthcheck, which has no shell or curl to
// run. It finds the server where -listen (LISTEN_ADDR) says it listens.
func healthcheckCommand(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	var url string
	timeout := 3 * time.Second
	s, rest, err := config.Load("sessiongraph healthcheck", args, env, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&url, "url", "", "the URL to GET; default http://<-listen>/readyz, on 127.0.0.1 when it listens on every interface")
		fs.DurationVar(&timeout, "timeout", timeout, "how long to wait for the answer")
	})
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "sessiongraph healthcheck:", err)
		return 2
	case len(rest) > 0:
		fmt.Fprintln(stderr, "usage: sessiongraph healthcheck [-url URL] [-timeout 3s]")
		return 2
	}
	if url == "" {
		url = "http://" + localAddr(s.Listen) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph healthcheck:", err)
		return 2
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph healthcheck: not ready:", err)
		return 1
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "sessiongraph healthcheck: not ready: %s %s: %s\n", url, res.Status, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", url, strings.TrimSpace(string(body)))
	return 0
}

// localAddr is the address to reach a server listening on listen from the
// same host: an unspecified host (every interface) is reached on loopback.
func localAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

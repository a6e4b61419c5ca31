package testdb

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// CommitGate stands between a Citus coordinator and one of its workers and
// lets every message through at once except the second phase of a
// two-phase commit: each COMMIT PREPARED on its way to the worker waits in
// the gate for as long as Hold, the test's function, takes to return. It
// opens the window between the coordinator's commit and the worker's, in
// which the coordinator no longer counts the transaction as running while
// the worker does not yet show its rows.
type CommitGate struct {
	// Hold is called with each COMMIT PREPARED before it goes on.
	Hold func(query string)

	ln     net.Listener
	target string
	tls    *tls.Config
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

// GateWorker puts a CommitGate in front of the worker at host:port, for the
// coordinator of the Citus database at dsn only (the node's address in that
// database's metadata becomes the gate's), until the test ends. hold is
// the gate's Hold.
func GateWorker(t testing.TB, dsn, host string, port int, hold func(query string)) *CommitGate {
	t.Helper()
	cfg, err := selfSigned()
	if err != nil {
		t.Fatalf("testdb: commit gate: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testdb: commit gate: %v", err)
	}
	g := &CommitGate{Hold: hold, ln: ln, target: net.JoinHostPort(host, strconv.Itoa(port)), tls: cfg}
	go g.serve()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatalf("testdb: commit gate: %v", err)
	}
	defer db.Close()
	gatePort := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, `SELECT citus_update_node(nodeid, '127.0.0.1', $3) FROM pg_dist_node WHERE nodename = $1 AND nodeport = $2`,
		host, port, gatePort); err != nil {
		t.Fatalf("testdb: commit gate: point the worker at the gate: %v", err)
	}
	t.Cleanup(g.close)
	return g
}

// close stops accepting and drops every connection once those in the gate
// have gone on.
func (g *CommitGate) close() {
	g.ln.Close()
	g.mu.Lock()
	for _, c := range g.conns {
		c.Close()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

func (g *CommitGate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.relay(c)
		}()
	}
}

// PostgreSQL's startup request codes.
const (
	sslRequest    = 80877103
	gssEncRequest = 80877104
	cancelRequest = 80877102
)

// relay answers the client's startup (TLS on the client's side, the
// worker reached in plain text), then forwards the client's messages one
// by one, holding back each COMMIT PREPARED.
func (g *CommitGate) relay(client net.Conn) {
	g.track(client)
	defer client.Close()
	in := bufio.NewReader(client)
	var startup []byte
	for startup == nil {
		msg, err := readUntyped(in)
		if err != nil {
			return
		}
		switch binary.BigEndian.Uint32(msg[4:8]) {
		case sslRequest:
			if _, err := client.Write([]byte{'S'}); err != nil {
				return
			}
			secure := tls.Server(client, g.tls)
			g.track(secure)
			client, in = secure, bufio.NewReader(secure)
		case gssEncRequest:
			if _, err := client.Write([]byte{'N'}); err != nil {
				return
			}
		default: // a startup message, or a cancel request
			startup = msg
		}
	}
	up, err := net.Dial("tcp", g.target)
	if err != nil {
		return
	}
	g.track(up)
	defer up.Close()
	if _, err := up.Write(startup); err != nil || binary.BigEndian.Uint32(startup[4:8]) == cancelRequest {
		return
	}
	go func() { _, _ = io.Copy(client, up); client.Close() }()
	for {
		kind, err := in.ReadByte()
		if err != nil {
			return
		}
		body, err := readUntyped(in)
		if err != nil {
			return
		}
		if kind == 'Q' && strings.Contains(strings.ToUpper(string(body[4:])), "COMMIT PREPARED") {
			g.Hold(strings.TrimRight(string(body[4:]), "\x00"))
		}
		if _, err := up.Write(append([]byte{kind}, body...)); err != nil {
			return
		}
	}
}

func (g *CommitGate) track(c net.Conn) {
	g.mu.Lock()
	g.conns = append(g.conns, c)
	g.mu.Unlock()
}

// readUntyped reads a length-prefixed message, the length included.
func readUntyped(r *bufio.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size < 4 || size > 1<<30 {
		return nil, fmt.Errorf("message of %d bytes", size)
	}
	msg := make([]byte, size)
	copy(msg, n[:])
	_, err := io.ReadFull(r, msg[4:])
	return msg, err
}

// selfSigned is a TLS server configuration with a throwaway certificate:
// Citus connects to its workers with sslmode=require, which verifies none.
func selfSigned() (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "commit-gate"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, nil
}

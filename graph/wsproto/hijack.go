package wsproto

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
)

// bufferSize is the read and write buffer of a connection. WebSocket frames
// of this protocol are small; net/http's 4 KB buffers, which coder/websocket
// would otherwise keep from the hijack, cost an idle subscriber 8 KB.
const bufferSize = 1024

// smallBuffers hands the WebSocket library a hijacked connection with small
// buffers of its own, so that net/http's can be collected. It keeps the
// connection, whose write deadline bounds each message (see connection.send).
type smallBuffers struct {
	http.ResponseWriter
	conn       net.Conn
	sendBuffer int // the socket's kernel send buffer, in bytes (SO_SNDBUF)
}

// Hijack implements http.Hijacker.
func (s *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The kernel otherwise grows a socket's send buffer to megabytes
	// (net.ipv4.tcp_wmem) for a client that stops reading, and the server
	// would hold all that for it before its relay filled and it learned that
	// the client was too slow. A fixed buffer bounds it, whatever the kernel's
	// settings; the socket then blocks, the relay fills, and the hub cuts the
	// subscriber off.
	if tcp, ok := conn.(*net.TCPConn); ok && s.sendBuffer > 0 {
		if err := tcp.SetWriteBuffer(s.sendBuffer); err != nil {
			conn.Close()
			return nil, nil, err
		}
	}
	// net/http may still hold the end of the 101 response.
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	if n := brw.Reader.Buffered(); n > 0 {
		// Bytes net/http already read past the request belong to the socket;
		// the connection itself yields them first, because the library
		// re-points its reader at the connection it is given.
		pending, _ := brw.Reader.Peek(n)
		conn = &pendingConn{Conn: conn, pending: bytes.NewReader(bytes.Clone(pending))}
	}
	s.conn = conn
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, bufferSize), bufio.NewWriterSize(conn, bufferSize)), nil
}

// pendingConn is a connection whose first reads return bytes already read.
type pendingConn struct {
	net.Conn
	pending *bytes.Reader
}

func (c *pendingConn) Read(p []byte) (int, error) {
	if c.pending.Len() > 0 {
		return c.pending.Read(p)
	}
	return c.Conn.Read(p)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (s *smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }

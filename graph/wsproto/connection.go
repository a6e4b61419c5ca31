package wsproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"
)

// connection is one socket: its read loop runs in Do's goroutine, and each
// operation (and the pinger) in a goroutine of its own, counted in wg.
type connection struct {
	t       *Transport
	ws      *websocket.Conn
	netConn net.Conn // under ws; its write deadline bounds each message
	exec    graphql.GraphExecutor
	header  http.Header

	// ctx lives as long as the socket; cancel ends every operation and the pinger.
	ctx    context.Context
	cancel context.CancelFunc
	// opBase is the context Init returned; operations derive from it. Read-loop only.
	opBase context.Context
	acked  bool // read-loop only
	wg     sync.WaitGroup

	// writeMu serializes writes, so a message is never interleaved with another
	// and an operation's messages go out in the order it sends them.
	writeMu sync.Mutex

	mu       sync.Mutex
	initSeen bool
	ops      map[string]*operation
}

// operation is one subscribe the client has not completed and the server has not finished.
type operation struct {
	cancel context.CancelFunc
}

func newConnection(t *Transport, ws *websocket.Conn, netConn net.Conn, r *http.Request, exec graphql.GraphExecutor) *connection {
	// Keep the request's values but not its cancellation: net/http cancels a
	// request's context when its handler returns, hijacked or not.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	return &connection{
		t:       t,
		ws:      ws,
		netConn: netConn,
		exec:    exec,
		header:  r.Header,
		ctx:     ctx,
		cancel:  cancel,
		ops:     map[string]*operation{},
	}
}

// serve reads client messages until the socket ends, then waits for the
// operations and the pinger to finish.
func (c *connection) serve() {
	defer func() {
		c.cancel()
		c.wg.Wait()
		_ = c.ws.CloseNow()
	}()

	initTimer := time.AfterFunc(c.t.initTimeout(), func() {
		c.mu.Lock()
		seen := c.initSeen
		c.mu.Unlock()
		if !seen {
			c.close(CloseInitTimeout, "Connection initialisation timeout")
		}
	})
	defer initTimer.Stop()
	if c.t.GoingAway != nil {
		goingAway := func() {
			c.close(CloseServiceRestart, "Service Restart: this server is shutting down; reconnect and resume from your last cursor")
		}
		if c.t.GoingAway.Err() != nil { // before any message is read
			goingAway()
			return
		}
		defer context.AfterFunc(c.t.GoingAway, goingAway)()
	}

	for {
		// Not c.ctx: coder/websocket drops the socket when a read's context ends,
		// which would lose the close frame close sends.
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				// The library has sent 1009, but the rest of the message is
				// still on its way: dropping the connection now would reset
				// it under a client still writing, which then sees 1006.
				// Finishing the close handshake reads the rest (for at most
				// the library's 5 s) and waits for the client's close frame.
				c.close(int(websocket.StatusMessageTooBig), "")
			}
			return
		}
		start := graphql.Now()
		if !c.handle(data, start) {
			return
		}
	}
}

// handle acts on one client message and reports whether the connection goes on.
func (c *connection) handle(data []byte, start time.Time) bool {
	m, err := parseMessage(data)
	if err != nil {
		c.close(CloseBadRequest, err.Error())
		return false
	}
	switch m.Type {
	case typeConnectionInit:
		return c.init(m.Payload)
	case typePing:
		return c.send(c.ctx, message{Type: typePong, Payload: m.Payload})
	case typePong:
		return true
	case typeSubscribe:
		if !c.acked {
			c.close(CloseUnauthorized, "Unauthorized")
			return false
		}
		params, err := subscribeParams(m.Payload)
		if err != nil {
			c.close(CloseBadRequest, err.Error())
			return false
		}
		params.Headers = c.header
		params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
		return c.subscribe(m.ID, params)
	case typeComplete:
		c.mu.Lock()
		op := c.ops[m.ID]
		delete(c.ops, m.ID) // the id is free again at once, as the protocol lets a client reuse it
		c.mu.Unlock()
		if op != nil {
			op.cancel()
		}
		return true
	}
	return true // parseMessage admits no other type
}

// init authorizes the connection and acknowledges it.
func (c *connection) init(payload json.RawMessage) bool {
	c.mu.Lock()
	again := c.initSeen
	c.initSeen = true
	c.mu.Unlock()
	if again {
		c.close(CloseTooManyInitRequests, "Too many initialisation requests")
		return false
	}

	ctx := c.ctx
	if c.t.Init != nil {
		var err error
		ctx, err = c.t.Init(c.ctx, initPayload(payload))
		if err != nil {
			code, reason := CloseForbidden, "Forbidden"
			if ce := (*CloseError)(nil); errors.As(err, &ce) {
				code, reason = ce.Code, ce.Reason
			}
			c.close(code, reason)
			return false
		}
		if ctx == nil {
			ctx = c.ctx
		}
	}
	// Init may return a context that is not derived from c.ctx; operations
	// must still end with the socket.
	base, cancel := context.WithCancel(ctx)
	context.AfterFunc(c.ctx, cancel)
	c.opBase = base
	c.acked = true
	context.AfterFunc(ctx, func() {
		if c.ctx.Err() == nil { // else the socket is ending anyway
			c.close(endedBy(context.Cause(ctx)))
		}
	})

	if !c.send(c.ctx, message{Type: typeConnectionAck}) {
		return false
	}
	if c.t.PingInterval > 0 {
		c.startPings()
	}
	return true
}

// startPings sends a ping every PingInterval until the socket ends. One
// timer per connection rather than a goroutine: idle connections are the
// common case and a parked goroutine costs its stack.
func (c *connection) startPings() {
	c.wg.Add(1)
	var once sync.Once
	done := func() { once.Do(c.wg.Done) }
	var timer *time.Timer
	timer = time.AfterFunc(c.t.PingInterval, func() {
		if c.ctx.Err() != nil || !c.send(c.ctx, message{Type: typePing}) {
			done()
			return
		}
		timer.Reset(c.t.PingInterval)
	})
	context.AfterFunc(c.ctx, func() {
		timer.Stop()
		done()
	})
}

// subscribe registers operation id and runs it in its own goroutine.
func (c *connection) subscribe(id string, params *graphql.RawParams) bool {
	c.mu.Lock()
	if _, active := c.ops[id]; active {
		c.mu.Unlock()
		c.close(CloseSubscriberExists, fmt.Sprintf("Subscriber for %s already exists", id))
		return false
	}
	ctx, cancel := context.WithCancel(c.opBase)
	op := &operation{cancel: cancel}
	c.ops[id] = op
	c.mu.Unlock()

	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer op.cancel()
		defer c.release(id, op)
		c.execute(ctx, id, op, params)
	}()
	return true
}

// release frees id from op, unless the client completed op and reused the id.
func (c *connection) release(id string, op *operation) {
	c.mu.Lock()
	if c.ops[id] == op {
		delete(c.ops, id)
	}
	c.mu.Unlock()
}

// send writes m unless ctx has ended, and reports whether it was written.
func (c *connection) send(ctx context.Context, m message) bool {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("wsproto: encode %s message: %v", m.Type, err))
	}
	return c.write(ctx, b)
}

// write sends one encoded message unless ctx has ended, and reports whether
// it was written. A client that does not take it within WriteTimeout loses
// its connection.
func (c *connection) write(ctx context.Context, b []byte) bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	// Checked under the lock: after a client's complete, or once the socket
	// is closing, nothing more of the operation goes out.
	if ctx.Err() != nil {
		return false
	}
	// The socket's write deadline, not a context: coder/websocket drops the
	// socket when a write's context ends (a cancelled operation must not take
	// the socket with it), and a context with a deadline costs a timer and a
	// callback per message, which at thousands of subscribers is a visible
	// share of the fan-out. The deadline is cleared after the write so that
	// the close handshake, which runs on its own context, is not cut short.
	err := c.netConn.SetWriteDeadline(time.Now().Add(c.t.writeTimeout()))
	if err == nil {
		err = c.ws.Write(context.Background(), websocket.MessageText, b)
	}
	if err != nil {
		c.cancel()
		_ = c.ws.CloseNow()
		return false
	}
	_ = c.netConn.SetWriteDeadline(time.Time{})
	return true
}

// endedBy is the close code and reason for a connection whose Init context
// ended with cause.
func endedBy(cause error) (int, string) {
	if ce := (*CloseError)(nil); errors.As(cause, &ce) {
		return ce.Code, ce.Reason
	}
	if cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return CloseForbidden, "Forbidden"
	}
	return CloseForbidden, "Forbidden: " + cause.Error()
}

// close ends every operation and closes the socket with code and reason.
func (c *connection) close(code int, reason string) {
	c.cancel()
	_ = c.ws.Close(websocket.StatusCode(code), closeReason(reason))
}

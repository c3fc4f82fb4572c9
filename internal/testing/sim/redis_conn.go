package sim

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// This file is the network between go-redis and the modelled server: a
// net.Conn that go-redis's Dialer returns, in-process, whose requests
// travel and are applied as events of the schedule. go-redis runs
// unchanged above it: its pool, its connection handshake (HELLO, CLIENT
// SETINFO), Script.Run's EVALSHA and EVAL after NOSCRIPT, pipelines, and
// its retries, which it makes on the errors a real connection gives:
// io.EOF when the server closed the connection (retried), a reset
// (ECONNRESET, not retried), a timeout at the deadline.
//
// A request is what one Write completes: the commands in it travel
// together, each invocation's latency and faults drawn from its own
// source, as for DynamoDB. A Read blocks the invocation's task, on the
// simulated clock, until the answer is back, the connection breaks or
// the read deadline passes. Outside an invocation (the differential
// test), a request is answered at once.

// redisConn is one connection of a sandbox's go-redis client.
type redisConn struct {
	r  *redisWorld // nil: answered at once by srv (the differential test)
	sb *sandbox
	// srv is the node the connection reached, once its first request
	// arrived; a failover that replaces it breaks the connection.
	srv   *redisServer
	state connState

	in      []byte    // written, not yet a whole command
	out     []byte    // answers that have arrived, not yet read
	pending []*answer // answers on their way, in order
	// lastWrite is the last write of this connection's commands, which
	// WAIT waits for.
	lastWrite *replWrite

	readDeadline time.Time // on the sandbox's clock; zero: none
	broken       error     // the error a read gets from brokenAt on
	brokenAt     time.Time
	closed       bool
}

// answer is the reply to one command, on its way back.
type answer struct {
	b       []byte
	readyAt time.Time // when it reaches the client
}

var (
	errReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	errPipe  = &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}
)

func (c *redisConn) Write(b []byte) (int, error) {
	if c.closed {
		return 0, net.ErrClosed
	}
	var cmds [][]string
	buf := b
	if len(c.in) > 0 {
		c.in = append(c.in, b...)
		buf = c.in
	}
	for {
		args, n, err := parseCommand(buf)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			break
		}
		cmds = append(cmds, args)
		buf = buf[n:]
	}
	c.in = append(c.in[:0], buf...) // what is not a whole command yet
	if len(cmds) == 0 {
		return len(b), nil
	}
	if c.r == nil || c.r.w.s.current == nil {
		c.applyNow(cmds)
		return len(b), nil
	}
	if c.broken != nil && !c.brokenAt.After(c.r.w.s.now) {
		return 0, errPipe
	}
	c.r.send(c, cmds)
	return len(b), nil
}

// applyNow answers cmds at once: at a cold start, or on a server with no
// world around it.
func (c *redisConn) applyNow(cmds [][]string) {
	if c.srv == nil {
		c.srv = c.r.primary
	}
	for _, args := range cmds {
		c.out = appendResp(c.out, c.srv.exec(&c.state, args), c.state.proto)
	}
}

func (c *redisConn) Read(b []byte) (int, error) {
	for {
		if c.closed {
			return 0, net.ErrClosed
		}
		if len(c.out) > 0 {
			n := copy(b, c.out)
			c.out = c.out[n:]
			return n, nil
		}
		if c.r == nil || c.r.w.s.current == nil {
			return 0, io.EOF // nothing was asked
		}
		w := c.r.w
		now := w.s.now
		next := time.Time{}
		if len(c.pending) > 0 {
			a := c.pending[0]
			if !a.readyAt.After(now) && (c.broken == nil || a.readyAt.Before(c.brokenAt)) {
				c.out = append(c.out, a.b...)
				c.pending = c.pending[1:]
				continue
			}
			next = a.readyAt
		}
		if c.broken != nil && !c.brokenAt.After(now) {
			return 0, c.broken
		}
		if c.broken != nil && (next.IsZero() || c.brokenAt.Before(next)) {
			next = c.brokenAt
		}
		if dl := c.deadline(); !dl.IsZero() {
			if !dl.After(now) {
				return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
			}
			if next.IsZero() || dl.Before(next) {
				next = dl
			}
		}
		if next.IsZero() {
			return 0, io.EOF // nothing on its way: go-redis reads only after it writes
		}
		c.sb.current.task.sleep(max(next.Sub(now), time.Microsecond))
	}
}

// deadline is the read deadline on the simulated clock. go-redis sets the
// context's deadline (on the simulated clock: the invocation's, less the
// store's margin), or, for a context without one (the writes after the
// handler), the real time plus ReadTimeout: a time of another clock,
// read here as ReadTimeout from now.
func (c *redisConn) deadline() time.Time {
	d := c.readDeadline
	if d.IsZero() {
		return d
	}
	w := c.r.w
	if d.Before(epoch.Add(-24*time.Hour)) || d.After(epoch.Add(30*24*time.Hour)) {
		return w.s.now.Add(redisReadTimeout)
	}
	return d.Add(-c.sb.clock.skew) // a deadline on the sandbox's clock
}

// redisReadTimeout is go-redis's default ReadTimeout.
const redisReadTimeout = 3 * time.Second

// brk breaks the connection at t with err, unless it broke sooner.
func (c *redisConn) brk(t time.Time, err error) {
	if c.broken == nil || t.Before(c.brokenAt) {
		c.broken, c.brokenAt = err, t
	}
}

func (c *redisConn) Close() error {
	c.closed = true
	return nil
}

func (c *redisConn) SetDeadline(t time.Time) error {
	c.readDeadline = t
	return nil
}
func (c *redisConn) SetReadDeadline(t time.Time) error { c.readDeadline = t; return nil }

// SetWriteDeadline: a write never blocks here (the request is on its
// way once written), so its deadline cannot pass.
func (c *redisConn) SetWriteDeadline(time.Time) error { return nil }

var redisAddr = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 6), Port: 6379}

func (c *redisConn) LocalAddr() net.Addr  { return &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 40000} }
func (c *redisConn) RemoteAddr() net.Addr { return redisAddr }

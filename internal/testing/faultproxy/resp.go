package faultproxy

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"net"
	"sync"
	"time"
)

// respProxy is the RESP framing of a [Proxy].
type respProxy struct {
	*Proxy
	target string
	wg     sync.WaitGroup // the accept loop and every connection's goroutines

	connMu sync.Mutex
	conns  map[*link]struct{}
	closed bool
}

// NewRESP starts a proxy on a free port of 127.0.0.1 that forwards the
// connections of Redis clients to target, a host:port. It forwards
// everything until rules are set with [Proxy.Set]; [Proxy.Addr] is the
// address to give the client.
func NewRESP(target string, opts ...Option) (*Proxy, error) {
	p, err := listen("redis", RESPFaults, opts)
	if err != nil {
		return nil, err
	}
	r := &respProxy{Proxy: p, target: target, conns: map[*link]struct{}{}}
	p.stop = r.close
	r.wg.Add(1)
	go r.accept()
	return p, nil
}

func (p *respProxy) close() {
	p.connMu.Lock()
	p.closed = true
	for l := range p.conns {
		l.close(false)
	}
	p.connMu.Unlock()
	p.listener.Close()
	p.wg.Wait()
}

func (p *respProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return // closed
		}
		server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
		if err != nil {
			client.Close()
			continue
		}
		l := &link{client: client, server: server}
		p.connMu.Lock()
		if p.closed {
			p.connMu.Unlock()
			l.close(false)
			return
		}
		p.conns[l] = struct{}{}
		p.connMu.Unlock()
		// Each command is queued before it is sent, so the reply
		// reader always finds it; the bound only slows a client that
		// pipelines more than that.
		pending := make(chan pending, 1024)
		p.wg.Add(2)
		go p.commands(l, pending)
		go p.replies(l, pending)
	}
}

// link is one client connection and its connection to the server.
type link struct {
	client, server net.Conn
	once           sync.Once
}

// close closes both connections, the client's with a TCP RST when reset
// is set: the client then gets no reply and no orderly end, as when a
// network path breaks.
func (l *link) close(reset bool) {
	l.once.Do(func() {
		if tcp, ok := l.client.(*net.TCPConn); ok && reset {
			tcp.SetLinger(0) //nolint:errcheck // at worst a FIN instead of a RST: the client still gets no reply
		}
		l.client.Close()
		l.server.Close()
	})
}

// pending is a command forwarded to the server whose reply is awaited.
type pending struct {
	rule  Rule
	fault bool
}

// commands reads the client's commands and forwards them, or resets the
// connection on a ResetBeforeServer fault.
func (p *respProxy) commands(l *link, queue chan<- pending) {
	defer p.wg.Done()
	defer close(queue)
	defer p.drop(l)
	r := bufio.NewReaderSize(l.client, 64<<10)
	for {
		raw, name, args, err := readCommand(r)
		if err != nil {
			l.close(false)
			return
		}
		rule, fault := p.choose(request{op: name, body: raw, script: script(name, args)})
		if fault && rule.Fault == ResetBeforeServer {
			rule.then()
			l.close(true)
			return
		}
		queue <- pending{rule: rule, fault: fault}
		p.forwarded(name) // before the reply can reach the client
		if _, err := l.server.Write(raw); err != nil {
			l.close(false)
			return
		}
	}
}

// script returns the SHA-1 of the Lua script that the command name (upper
// case) with its arguments runs, or "" for a command that runs none.
func script(name string, args [][]byte) string {
	if len(args) == 0 {
		return ""
	}
	switch name {
	case "EVALSHA", "EVALSHA_RO":
		return string(args[0])
	case "EVAL", "EVAL_RO":
		sum := sha1.Sum(args[0])
		return hex.EncodeToString(sum[:])
	}
	return ""
}

// replies reads the server's replies, pairs each with its command, and
// passes it on, late or not at all when the command's rule says so.
func (p *respProxy) replies(l *link, queue <-chan pending) {
	defer p.wg.Done()
	defer func() {
		for range queue { // unblock commands until it sees the connection closed
		}
	}()
	r := bufio.NewReaderSize(l.server, 64<<10)
	for {
		reply, err := readValue(r, nil)
		if err != nil {
			l.close(false)
			return
		}
		cmd, ok := <-queue
		if !ok {
			return
		}
		if cmd.fault {
			if cmd.rule.Fault == Latency {
				time.Sleep(cmd.rule.Delay)
			}
			cmd.rule.then()
			if cmd.rule.Fault == ReplyLost {
				l.close(true)
				return
			}
		}
		if _, err := l.client.Write(reply); err != nil {
			l.close(false)
			return
		}
	}
}

func (p *respProxy) drop(l *link) {
	p.connMu.Lock()
	delete(p.conns, l)
	p.connMu.Unlock()
}

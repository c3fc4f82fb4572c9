package respfault

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy forwards the connections of Redis clients to one server, breaking
// the commands its rules select. Make it with [New]; stop it with
// [Proxy.Close].
type Proxy struct {
	target   string
	listener net.Listener
	wg       sync.WaitGroup // the accept loop and every connection's goroutines

	mu     sync.Mutex
	rules  []*rule
	counts Counts
	conns  map[*link]struct{}
	closed bool
}

// New starts a proxy on a free port of 127.0.0.1 that forwards to target,
// a host:port. It forwards everything until rules are set with
// [Proxy.Set].
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("respfault: listen: %w", err)
	}
	p := &Proxy{target: target, listener: ln, counts: newCounts(), conns: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port, to give the client in place of the
// server's.
func (p *Proxy) Addr() string { return p.listener.Addr().String() }

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for l := range p.conns {
		l.close(false)
	}
	p.mu.Unlock()
	p.listener.Close()
	p.wg.Wait()
}

// Set replaces the rules, with fresh rule counters. Set() with no rule
// turns faults off.
func (p *Proxy) Set(rules ...Rule) {
	rs := make([]*rule, len(rules))
	for i, r := range rules {
		rs[i] = &rule{Rule: r}
	}
	p.mu.Lock()
	p.rules = rs
	p.mu.Unlock()
}

// Counts returns a copy of the counters since the proxy started or since
// the last [Proxy.ResetCounts].
func (p *Proxy) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts.clone()
}

// ResetCounts sets the counters back to zero. Rules keep theirs.
func (p *Proxy) ResetCounts() {
	p.mu.Lock()
	p.counts = newCounts()
	p.mu.Unlock()
}

// choose counts the command and returns the fault it gets, if any.
func (p *Proxy) choose(name string, args [][]byte) (Rule, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts.Commands[name]++
	for _, r := range p.rules {
		if r.matches(name, args) && r.fire() {
			p.counts.Injected[Injection{Command: name, Fault: r.Fault}]++
			return r.Rule, true
		}
	}
	return Rule{}, false
}

func (p *Proxy) forwarded(name string) {
	p.mu.Lock()
	p.counts.Forwarded[name]++
	p.mu.Unlock()
}

func (p *Proxy) accept() {
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
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			l.close(false)
			return
		}
		p.conns[l] = struct{}{}
		p.mu.Unlock()
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
	name  string
	rule  Rule
	fault bool
}

// commands reads the client's commands and forwards them, or resets the
// connection on a ResetBeforeServer fault.
func (p *Proxy) commands(l *link, queue chan<- pending) {
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
		rule, fault := p.choose(name, args)
		if fault && rule.Fault == ResetBeforeServer {
			l.close(true)
			return
		}
		queue <- pending{name: name, rule: rule, fault: fault}
		p.forwarded(name) // before the reply can reach the client
		if _, err := l.server.Write(raw); err != nil {
			l.close(false)
			return
		}
	}
}

// replies reads the server's replies, pairs each with its command, and
// passes it on, late or not at all when the command's rule says so.
func (p *Proxy) replies(l *link, queue <-chan pending) {
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
			switch cmd.rule.Fault {
			case ReplyLost:
				l.close(true)
				return
			case Latency:
				time.Sleep(cmd.rule.Delay)
			}
		}
		if _, err := l.client.Write(reply); err != nil {
			l.close(false)
			return
		}
	}
}

func (p *Proxy) drop(l *link) {
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
}

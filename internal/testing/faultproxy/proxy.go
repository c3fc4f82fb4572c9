package faultproxy

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
)

// Proxy forwards the requests of clients to one server, breaking those its
// rules select. Make it with [NewHTTP] or [NewRESP]; stop it with
// [Proxy.Close].
type Proxy struct {
	listener net.Listener
	scheme   string  // of URL
	faults   []Fault // those the protocol has
	stop     func()  // ends the protocol's connections and goroutines

	mu     sync.Mutex
	rules  []*rule
	rand   *rand.Rand
	counts Counts
}

// Option configures a [Proxy].
type Option func(*Proxy)

// WithSeed seeds the source that rate-based rules draw from, so that a run
// can be repeated. The default seed is 1.
func WithSeed(seed uint64) Option {
	return func(p *Proxy) { p.rand = rand.New(rand.NewPCG(seed, seed)) }
}

// listen returns a proxy on a free port of 127.0.0.1, for the protocol's
// constructor to serve.
func listen(scheme string, faults []Fault, opts []Option) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{listener: ln, scheme: scheme, faults: faults, counts: newCounts()}
	WithSeed(1)(p)
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Addr is the proxy's host:port, to give a client in place of the
// server's.
func (p *Proxy) Addr() string { return p.listener.Addr().String() }

// URL is the proxy's base URL: http:// for an HTTP proxy, to use as the
// SDK's endpoint, or redis:// for a RESP proxy.
func (p *Proxy) URL() string { return p.scheme + "://" + p.Addr() }

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() { p.stop() }

// Set replaces the rules, with fresh rule counters. Set() with no rule
// turns faults off. A fault the proxy's protocol does not have (an HTTP
// error reply on a RESP proxy) is a mistake in the test, and panics.
func (p *Proxy) Set(rules ...Rule) {
	rs := make([]*rule, len(rules))
	for i, r := range rules {
		if r.Fault != 0 && !slices.Contains(p.faults, r.Fault) {
			panic(fmt.Sprintf("faultproxy: a %s proxy has no %v fault", p.scheme, r.Fault))
		}
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

// choose counts the request and returns the fault it gets, if any.
func (p *Proxy) choose(req request) (Rule, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts.Requests[req.op]++
	for _, r := range p.rules {
		if r.matches(req) && r.fire(p.rand.Float64) {
			p.counts.Injected[Injection{Op: req.op, Fault: r.Fault}]++
			return r.Rule, true
		}
	}
	return Rule{}, false
}

// forwarded counts a request of operation op that reached the server.
func (p *Proxy) forwarded(op string) {
	p.mu.Lock()
	p.counts.Forwarded[op]++
	p.mu.Unlock()
}

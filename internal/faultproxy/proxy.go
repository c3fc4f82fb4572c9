package faultproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Proxy forwards HTTP requests to one server, breaking those its rules
// select. Make it with [New]; stop it with [Proxy.Close].
type Proxy struct {
	target    string
	listener  net.Listener
	server    *http.Server
	transport *http.Transport

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

// New starts a proxy on a free port of 127.0.0.1 that forwards to target,
// a base URL such as "http://127.0.0.1:5000". It forwards everything until
// rules are set with [Proxy.Set].
func New(target string, opts ...Option) (*Proxy, error) {
	target = strings.TrimSuffix(target, "/")
	if !strings.HasPrefix(target, "http://") {
		return nil, fmt.Errorf("faultproxy: target %q: want an http:// URL", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{
		target:   target,
		listener: ln,
		transport: &http.Transport{
			// The bytes pass through as the server sent them: the SDK
			// checks DynamoDB's X-Amz-Crc32 against them.
			DisableCompression:  true,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
		},
		counts: newCounts(),
	}
	WithSeed(1)(p)
	for _, o := range opts {
		o(p)
	}
	p.server = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go p.server.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed on Close.
	return p, nil
}

// URL is the proxy's base URL, to use as the SDK's endpoint.
func (p *Proxy) URL() string { return "http://" + p.listener.Addr().String() }

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.server.Close()
	p.transport.CloseIdleConnections()
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

// choose counts the request and returns the fault it gets, if any.
func (p *Proxy) choose(op string, body []byte) (Rule, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts.Requests[op]++
	for _, r := range p.rules {
		if r.matches(op, body) && r.fire(p.rand.Float64) {
			p.counts.Injected[Injection{Op: op, Fault: r.Fault}]++
			return r.Rule, true
		}
	}
	return Rule{}, false
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away; nothing to answer
	}
	op := operation(r.Header.Get("X-Amz-Target"))
	rule, broken := p.choose(op, body)
	if broken {
		switch rule.Fault {
		case Throttling, ProvisionedThroughputExceeded, InternalServerError:
			rule.then()
			writeError(w, rule.Fault)
			return
		case ResetBeforeServer:
			rule.then()
			reset(w)
			return
		case Latency:
			select {
			case <-time.After(rule.Delay):
			case <-r.Context().Done():
				return
			}
		}
	}
	resp, err := p.forward(r.Context(), r, body)
	if err != nil {
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	p.mu.Lock()
	p.counts.Forwarded[op]++
	p.mu.Unlock()
	if broken {
		rule.then()
		if rule.Fault == ReplyLost {
			reset(w)
			return
		}
	}
	h := w.Header()
	for k, vs := range resp.header {
		h[k] = vs
	}
	w.WriteHeader(resp.status)
	w.Write(resp.body) //nolint:errcheck // a client gone is not the proxy's failure
}

// operation is the part of X-Amz-Target after the dot:
// "DynamoDB_20120810.PutItem" -> "PutItem".
func operation(target string) string {
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		return target[i+1:]
	}
	return target
}

// reply is the server's whole answer, read before anything is passed on,
// so that ReplyLost can drop it after the server has applied the request.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// hopHeaders are connection-level headers a proxy does not pass on.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length"}

func (p *Proxy) forward(ctx context.Context, in *http.Request, body []byte) (*reply, error) {
	out, err := http.NewRequestWithContext(ctx, in.Method, p.target+in.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = in.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	h := resp.Header.Clone()
	for _, k := range hopHeaders {
		h.Del(k)
	}
	return &reply{status: resp.StatusCode, header: h, body: b}, nil
}

// reset closes the client's connection with a TCP RST and no reply.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("faultproxy: the ResponseWriter cannot be hijacked") // net/http's HTTP/1 server always can
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0) //nolint:errcheck // at worst a FIN instead of a RST: the client still gets no reply
	}
	conn.Close()
}

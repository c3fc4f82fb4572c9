package faultproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// httpProxy is the HTTP framing of a [Proxy].
type httpProxy struct {
	*Proxy
	target    string
	server    *http.Server
	transport *http.Transport
}

// NewHTTP starts a proxy on a free port of 127.0.0.1 that forwards HTTP
// requests to target, a base URL such as "http://127.0.0.1:5000". It
// forwards everything until rules are set with [Proxy.Set]; [Proxy.URL]
// is the endpoint to give the SDK.
func NewHTTP(target string, opts ...Option) (*Proxy, error) {
	target = strings.TrimSuffix(target, "/")
	if !strings.HasPrefix(target, "http://") {
		return nil, fmt.Errorf("faultproxy: target %q: want an http:// URL", target)
	}
	p, err := listen("http", HTTPFaults, opts)
	if err != nil {
		return nil, err
	}
	h := &httpProxy{
		Proxy:  p,
		target: target,
		transport: &http.Transport{
			// The bytes pass through as the server sent them: the SDK
			// checks DynamoDB's X-Amz-Crc32 against them.
			DisableCompression:  true,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
		},
	}
	h.server = &http.Server{Handler: http.HandlerFunc(h.serve), ReadHeaderTimeout: 10 * time.Second}
	p.stop = func() {
		h.server.Close()
		h.transport.CloseIdleConnections()
	}
	go h.server.Serve(p.listener) //nolint:errcheck // Serve returns ErrServerClosed on Close.
	return p, nil
}

func (p *httpProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away; nothing to answer
	}
	op := operation(r.Header.Get("X-Amz-Target"))
	rule, broken := p.choose(request{op: op, body: body})
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
	p.forwarded(op)
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

func (p *httpProxy) forward(ctx context.Context, in *http.Request, body []byte) (*reply, error) {
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

package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// The middleware on the store, through internal/faultproxy, with go-redis
// as it is by default: each fault the network can produce, on each
// command the store sends, must leave every effect run once.

// attempts is how often go-redis sends a command whose connection broke:
// once, and 3 retries (Options.MaxRetries for a Client,
// ClusterOptions.MaxRedirects for a ClusterClient, both 3 by default).
const attempts = 4

// faultLease is the lease of every invocation here: their contexts have no
// deadline. The middleware retries a COMPLETED write only while the lease
// leaves time, on the real clock: 30 s leave its 2 s of retries room on a
// loaded machine. The tests move past it on their own clock.
const faultLease = 30 * time.Second

// faultWorld is one fault test's world: a store reached through one proxy
// per server node, a store reaching the server directly for checks, a
// clock the test moves, and a handler that counts runs and effects per
// order.
type faultWorld struct {
	t       *testing.T
	proxies proxies
	store   *Store // through the proxies
	direct  *Store // to the server, with the same keys
	admin   redis.UniversalClient
	clock   atomic.Pointer[time.Time]
	logs    *errorLog

	mu        sync.Mutex
	effects   map[string]int // successful handler calls per order id
	fail      map[string]int // the next n calls of this id fail
	uncertain map[string]int // the next n calls of this id time out, their outcome unknown
}

type faultEvent struct {
	ID string `json:"id"`
}

type faultReply struct {
	Charged string `json:"charged"`
}

var (
	errCardDeclined = errors.New("card declined")
	errTimedOut     = errors.New("the provider did not answer")
)

func newFaultWorld(t *testing.T, srv server) *faultWorld {
	t.Helper()
	addrs := srv.addrs(t)
	ps := make(proxies, len(addrs))
	for _, addr := range addrs {
		p, err := faultproxy.NewRESP(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		ps[addr] = p
	}
	// The client dials the servers' own addresses, which a cluster's nodes
	// announce, and reaches the proxies in their stead.
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		p, ok := ps[addr]
		if !ok {
			return nil, fmt.Errorf("no proxy for %s", addr)
		}
		return d.DialContext(ctx, network, p.Addr())
	}
	// go-redis as it is by default, but for a backoff between attempts of
	// 1 to 2 ms instead of up to 512 ms, so that the tests run in seconds,
	// and timeouts that a loaded machine does not reach (a timed-out
	// command is retried, which would break more commands than a test
	// means to).
	const timeout = 30 * time.Second
	var client redis.UniversalClient
	if srv.cluster {
		client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Dialer: dial,
			MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 2 * time.Millisecond,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	} else {
		client = redis.NewClient(&redis.Options{Addr: addrs[0], Dialer: dial,
			MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 2 * time.Millisecond,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	}
	t.Cleanup(func() { client.Close() })
	prefix := testPrefix(t)
	store, err := New(client, func(o *Options) { o.KeyPrefix = prefix })
	if err != nil {
		t.Fatal(err)
	}
	admin := srv.client(t)
	direct, _ := New(admin, func(o *Options) { o.KeyPrefix = prefix })
	w := &faultWorld{t: t, proxies: ps, store: store, direct: direct, admin: admin, logs: &errorLog{},
		effects: map[string]int{}, fail: map[string]int{}, uncertain: map[string]int{}}
	now := time.Now()
	w.clock.Store(&now)
	loadScripts(t, admin)
	return w
}

// proxies are the proxies of a server's nodes, by node address.
type proxies map[string]*faultproxy.Proxy

// Set sets the rules on every proxy: a key's commands go to one node.
func (ps proxies) Set(rules ...faultproxy.Rule) {
	for _, p := range ps {
		p.Set(rules...)
	}
}

func (ps proxies) ResetCounts() {
	for _, p := range ps {
		p.ResetCounts()
	}
}

// injected is how many times f was injected, by all the proxies.
func (ps proxies) injected(f faultproxy.Fault) int {
	n := 0
	for _, p := range ps {
		n += p.Counts().InjectedFault(f)
	}
	return n
}

func (w *faultWorld) now() time.Time { return *w.clock.Load() }

func (w *faultWorld) advance(d time.Duration) {
	now := w.now().Add(d)
	w.clock.Store(&now)
}

// catchUp moves the clock to the real time if it is behind, so that a
// lease counted from it leaves the middleware's own retries their time.
func (w *faultWorld) catchUp() {
	if now := time.Now(); now.After(w.now()) {
		w.clock.Store(&now)
	}
}

func (w *faultWorld) handler(_ context.Context, e faultEvent) (faultReply, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail[e.ID] > 0 {
		w.fail[e.ID]--
		return faultReply{}, errCardDeclined
	}
	if w.uncertain[e.ID] > 0 {
		w.uncertain[e.ID]--
		return faultReply{}, idempotency.Uncertain(errTimedOut)
	}
	w.effects[e.ID]++
	return faultReply{Charged: e.ID}, nil
}

// wrap is the middleware on the proxied store. An UNCERTAIN order is
// reconciled by asking the provider, which says the charge did not
// happen: the handler then runs.
func (w *faultWorld) wrap() *idempotency.Handler {
	return idempotency.Wrap(w.store, w.handler,
		idempotency.WithEventKey("id"),
		idempotency.WithKeyPrefix(faultPrefix),
		idempotency.WithLease(faultLease),
		idempotency.WithClock(w.now),
		idempotency.WithLogger(slog.New(w.logs)),
		idempotency.WithReconcile(func(context.Context, string) (faultReply, bool, error) {
			return faultReply{}, false, nil
		}))
}

const faultPrefix = "faults"

// invoke calls h with the order id and returns the charged id.
func (w *faultWorld) invoke(h *idempotency.Handler, id string) (string, error) {
	payload, _ := json.Marshal(faultEvent{ID: id})
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		return "", err
	}
	var r faultReply
	if err := json.Unmarshal(out, &r); err != nil {
		return "", fmt.Errorf("response %q: %w", out, err)
	}
	return r.Charged, nil
}

// wantCharged fails unless the invocation answered the charge of id.
func (w *faultWorld) wantCharged(what, id, got string, err error) {
	w.t.Helper()
	if err != nil || got != id {
		w.t.Fatalf("%s: got (%q, %v), want the charge of %q", what, got, err, id)
	}
}

// wantEffects fails unless id's handler succeeded n times.
func (w *faultWorld) wantEffects(id string, n int) {
	w.t.Helper()
	w.mu.Lock()
	got := w.effects[id]
	w.mu.Unlock()
	if got != n {
		w.t.Errorf("order %s charged %d times, want %d", id, got, n)
	}
}

// record reads the record of id directly, or nil when there is none.
func (w *faultWorld) record(id string) *idempotency.Record {
	w.t.Helper()
	rec, err := w.direct.Get(context.Background(), middlewareKey(faultPrefix, `"`+id+`"`))
	if errors.Is(err, idempotency.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		w.t.Fatalf("record of %s: %v", id, err)
	}
	return rec
}

// wantStatus fails unless the record of id has the status (or is gone, for
// status "").
func (w *faultWorld) wantStatus(id string, status idempotency.Status) {
	w.t.Helper()
	var got idempotency.Status
	if rec := w.record(id); rec != nil {
		got = rec.Status
	}
	if got != status {
		w.t.Errorf("record of %s has status %q, want %q", id, got, status)
	}
}

// flushScripts makes every node forget the store's scripts, so that the
// next command of each is EVALSHA, NOSCRIPT, then EVAL.
func (w *faultWorld) flushScripts() {
	w.t.Helper()
	var err error
	if cc, ok := w.admin.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(context.Background(), func(ctx context.Context, n *redis.Client) error { return n.ScriptFlush(ctx).Err() })
	} else {
		err = w.admin.ScriptFlush(context.Background()).Err()
	}
	if err != nil {
		w.t.Fatal(err)
	}
}

// errorLog is a slog handler that counts the middleware's ERROR records by
// message.
type errorLog struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *errorLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[r.Message]++
	return nil
}

func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

func (l *errorLog) reset() {
	l.mu.Lock()
	l.n = nil
	l.mu.Unlock()
}

func (l *errorLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, v := range l.n {
		n += v
	}
	return n
}

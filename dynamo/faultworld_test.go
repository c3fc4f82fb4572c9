package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gopowertools/lambda/internal/faultproxy"
	"github.com/gopowertools/lambda/internal/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The middleware on the DynamoDB store, through internal/faultproxy, with
// the SDK's standard retryer: each fault the network or DynamoDB can
// produce, on each request the middleware sends, must leave every effect
// run once.

// The requests the middleware sends, told apart by operation and body.
var (
	acquirePut  = faultproxy.Rule{Op: "PutItem", BodyContains: "attribute_not_exists(#id) OR #expiry"}
	completePut = faultproxy.Rule{Op: "PutItem", BodyContains: `"ConditionExpression":"#token = :token"`}
	releaseDel  = faultproxy.Rule{Op: "DeleteItem"}
	getItemReq  = faultproxy.Rule{Op: "GetItem"}
)

// faultLease is the lease of every invocation here: their contexts have no
// deadline.
const faultLease = 10 * time.Second

// faultWorld is one fault test's world: a store on a fresh table reached
// through a proxy, a clock the test moves, and a handler that counts runs
// and effects per key.
type faultWorld struct {
	t     *testing.T
	proxy *faultproxy.Proxy
	store *Store
	clock atomic.Pointer[time.Time]
	logs  *errorLog

	mu      sync.Mutex
	runs    map[string]int // handler calls per order id
	effects map[string]int // successful handler calls per order id
	fail    map[string]int // the next n calls of this id fail
}

type faultEvent struct {
	ID string `json:"id"`
}

type faultReply struct {
	Charged string `json:"charged"`
}

var errCardDeclined = errors.New("card declined")

// faultRetryer is the SDK's standard retryer, as it is by default (three
// attempts, the default retryable errors and retry quota), with its
// backoff cut from up to seconds to a millisecond so that the tests run
// fast. maxAttempts 0 keeps the default.
func faultRetryer(maxAttempts int) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			if maxAttempts > 0 {
				so.MaxAttempts = maxAttempts
			}
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		})
	}
}

func newFaultWorld(t *testing.T, srv server, proxyOpts ...faultproxy.Option) *faultWorld {
	t.Helper()
	direct := srv.client(t)
	p, err := faultproxy.NewHTTP(testenv.Endpoint(t, srv.env), proxyOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	opts := newTable(t, direct)
	store, err := New(testenv.NewDynamoDB(p.URL(), faultRetryer(0)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	w := &faultWorld{t: t, proxy: p, store: store, logs: &errorLog{},
		runs: map[string]int{}, effects: map[string]int{}, fail: map[string]int{}}
	now := time.Now()
	w.clock.Store(&now)
	return w
}

func (w *faultWorld) now() time.Time { return *w.clock.Load() }

func (w *faultWorld) advance(d time.Duration) {
	now := w.now().Add(d)
	w.clock.Store(&now)
}

func (w *faultWorld) handler(_ context.Context, e faultEvent) (faultReply, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs[e.ID]++
	if w.fail[e.ID] > 0 {
		w.fail[e.ID]--
		return faultReply{}, errCardDeclined
	}
	w.effects[e.ID]++
	return faultReply{Charged: e.ID}, nil
}

func (w *faultWorld) wrap() *idempotency.Handler {
	return idempotency.Wrap(w.store, w.handler,
		idempotency.WithEventKey("id"),
		idempotency.WithKeyPrefix(faultPrefix),
		idempotency.WithLease(faultLease),
		idempotency.WithClock(w.now),
		idempotency.WithLogger(slog.New(w.logs)))
}

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

func (w *faultWorld) count(m map[string]int, id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return m[id]
}

// wantEffects fails unless id's handler succeeded n times.
func (w *faultWorld) wantEffects(id string, n int) {
	w.t.Helper()
	if got := w.count(w.effects, id); got != n {
		w.t.Errorf("order %s charged %d times, want %d", id, got, n)
	}
}

// wantStatus fails unless the record of id has the status (or is gone, for
// status "").
func (w *faultWorld) wantStatus(id string, status idempotency.Status) {
	w.t.Helper()
	key := w.key(id)
	rec, err := w.store.Get(context.Background(), key)
	switch {
	case status == "" && errors.Is(err, idempotency.ErrRecordNotFound):
	case err != nil:
		w.t.Errorf("record of %s: %v, want status %q", id, err, status)
	case rec.Status != status:
		w.t.Errorf("record of %s has status %q, want %q", id, rec.Status, status)
	}
}

// key is the idempotency key of id: the prefix, and the SHA-256 of the
// selected value's canonical JSON, a plain JSON string for the ids used
// here.
func (w *faultWorld) key(id string) string {
	sum := sha256.Sum256([]byte(strconv.Quote(id)))
	return faultPrefix + "#" + hex.EncodeToString(sum[:])
}

const faultPrefix = "faults"

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

// Package faultworld is the world of the stores' fault tests, shared by
// the tests of dynamo and of redis: the middleware on a store reached
// through internal/testing/faultproxy, a handler that charges orders and counts
// its effects per order, a clock the test moves, and the tests that break
// the store's requests one path at a time ([World.TestRetried],
// [World.TestBeyondRetries]). Each store's tests keep only what is theirs:
// how the store and its proxies are made, and which requests make each
// path.
package faultworld

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
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Prefix is the key prefix of the middleware in a World.
const Prefix = "faults"

// Lease is the lease of every invocation of [World.Wrap]: their contexts
// have no deadline. The middleware retries a COMPLETED write only while
// the lease leaves time, on the real clock: 30 s leave its retries room on
// a loaded machine. The tests move past it on their own clock.
const Lease = 30 * time.Second

// The handler's own errors.
var (
	ErrCardDeclined = errors.New("card declined")
	ErrTimedOut     = errors.New("the provider did not answer")
)

// Event is an order to charge.
type Event struct {
	ID string `json:"id"`
}

// Reply is the charge.
type Reply struct {
	Charged string `json:"charged"`
}

// World is one fault test's world. Make it with [New].
type World struct {
	// T is the test that the checks fail; a subtest sets its own.
	T *testing.T
	// Proxies are the proxies between the store and its server.
	Proxies Proxies
	// Store is the store under test, reached through the proxies.
	Store idempotency.Store
	// Check is the store the checks read records from.
	Check idempotency.Store
	// Logs keeps what the middleware logged.
	Logs *fake.Log
	// Clock is the world's clock, which the test moves.
	*fake.Clock

	mu        sync.Mutex
	effects   map[string]int // successful handler calls per order id
	fail      map[string]int // the next n calls of this id fail
	uncertain map[string]int // the next n calls of this id time out, their outcome unknown
}

// New returns a world whose clock reads the real time, for store reached
// through proxies; check reads the records for the checks (store itself
// will do when no fault is set while it reads).
func New(t *testing.T, store, check idempotency.Store, proxies ...*faultproxy.Proxy) *World {
	return &World{T: t, Proxies: proxies, Store: store, Check: check, Logs: &fake.Log{}, Clock: fake.NewClock(time.Now()),
		effects: map[string]int{}, fail: map[string]int{}, uncertain: map[string]int{}}
}

// CatchUp moves the clock to the real time if it is behind, so that a
// lease counted from it leaves the middleware's own retries their time.
func (w *World) CatchUp() {
	if behind := time.Since(w.Now()); behind > 0 {
		w.Advance(behind)
	}
}

// Fail makes the next n calls of the handler for id return
// [ErrCardDeclined].
func (w *World) Fail(id string, n int) {
	w.mu.Lock()
	w.fail[id] = n
	w.mu.Unlock()
}

// Uncertain makes the next n calls of the handler for id return
// [ErrTimedOut] as [idempotency.Uncertain].
func (w *World) Uncertain(id string, n int) {
	w.mu.Lock()
	w.uncertain[id] = n
	w.mu.Unlock()
}

// Handler charges the order, unless [World.Fail] or [World.Uncertain]
// says otherwise.
func (w *World) Handler(_ context.Context, e Event) (Reply, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail[e.ID] > 0 {
		w.fail[e.ID]--
		return Reply{}, ErrCardDeclined
	}
	if w.uncertain[e.ID] > 0 {
		w.uncertain[e.ID]--
		return Reply{}, idempotency.Uncertain(ErrTimedOut)
	}
	w.effects[e.ID]++
	return Reply{Charged: e.ID}, nil
}

// Effects is how many times the handler charged id.
func (w *World) Effects(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.effects[id]
}

// Wrap is the middleware on the store under test, on the world's clock
// and logs, with [Prefix] and [Lease], and opts.
func (w *World) Wrap(opts ...idempotency.Option) *idempotency.Handler {
	return idempotency.Wrap(w.Store, w.Handler, append([]idempotency.Option{
		idempotency.WithEventKey("id"),
		idempotency.WithKeyPrefix(Prefix),
		idempotency.WithLease(Lease),
		idempotency.WithClock(w.Now),
		idempotency.WithLogger(slog.New(w.Logs)),
	}, opts...)...)
}

// Invoke calls h with the order id and returns the charged id.
func (w *World) Invoke(h *idempotency.Handler, id string) (string, error) {
	payload, _ := json.Marshal(Event{ID: id})
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		return "", err
	}
	var r Reply
	if err := json.Unmarshal(out, &r); err != nil {
		return "", fmt.Errorf("response %q: %w", out, err)
	}
	return r.Charged, nil
}

// Key is the idempotency key of id: the prefix, and the SHA-256 of the
// selected value's canonical JSON, a plain JSON string for the ids used
// here.
func Key(id string) string {
	sum := sha256.Sum256([]byte(strconv.Quote(id)))
	return Prefix + "#" + hex.EncodeToString(sum[:])
}

// Record reads the record of id from the check store, or nil when there
// is none.
func (w *World) Record(id string) *idempotency.Record {
	w.T.Helper()
	rec, err := w.Check.Get(context.Background(), Key(id))
	if errors.Is(err, idempotency.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		w.T.Fatalf("record of %s: %v", id, err)
	}
	return rec
}

// WantCharged fails unless the invocation answered the charge of id.
func (w *World) WantCharged(what, id, got string, err error) {
	w.T.Helper()
	if err != nil || got != id {
		w.T.Fatalf("%s: got (%q, %v), want the charge of %q", what, got, err, id)
	}
}

// WantEffects fails unless id's handler succeeded n times.
func (w *World) WantEffects(id string, n int) {
	w.T.Helper()
	if got := w.Effects(id); got != n {
		w.T.Errorf("order %s charged %d times, want %d", id, got, n)
	}
}

// WantStatus fails unless the record of id has the status (or is gone,
// for status "").
func (w *World) WantStatus(id string, status idempotency.Status) {
	w.T.Helper()
	var got idempotency.Status
	if rec := w.Record(id); rec != nil {
		got = rec.Status
	}
	if got != status {
		w.T.Errorf("record of %s has status %q, want %q", id, got, status)
	}
}

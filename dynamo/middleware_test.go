package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The middleware's flows end to end on the real servers, with the requests
// each path sends.

type order struct {
	ID     string `json:"id"`
	Who    string `json:"who,omitempty"`
	Amount int    `json:"amount,omitempty"`
}

type receipt struct {
	Who string `json:"who"`
}

// flow is one middleware test's world: a store on a fresh table, a
// request counter, a clock the test moves, and a handler whose behaviour
// each event chooses through Who.
type flow struct {
	t      *testing.T
	srv    server
	client *dynamodb.Client
	store  *Store
	reqs   *requests
	clock  *fake.Clock
	calls  atomic.Int32
	log    fake.Log // what the middleware logged
	// The handler for Who "block" signals started, then waits for
	// proceed; for Who "hold" it only waits for proceed.
	started, proceed chan struct{}
}

func newFlow(t *testing.T, srv server) *flow {
	f := &flow{t: t, srv: srv, reqs: &requests{}, started: make(chan struct{}, 1), proceed: make(chan struct{})}
	f.client = srv.client(t, f.reqs.option)
	f.store = newStore(t, f.client)
	warm(t, f.store)
	f.clock = fake.NewClock(time.Now())
	return f
}

var errDeclined = errors.New("declined")

func (f *flow) handler(ctx context.Context, o order) (receipt, error) {
	f.calls.Add(1)
	switch o.Who {
	case "block":
		f.started <- struct{}{}
		<-f.proceed
	case "fail":
		return receipt{}, errDeclined
	case "panic":
		panic("boom")
	case "hold":
		<-f.proceed
	}
	return receipt{Who: o.Who}, nil
}

// wrap builds the idempotent handler on the flow's store and clock.
func (f *flow) wrap(opts ...idempotency.Option) *idempotency.Handler {
	base := []idempotency.Option{
		idempotency.WithEventKey("id"),
		idempotency.WithKeyPrefix("orders"),
		idempotency.WithLease(10 * time.Second),
		idempotency.WithClock(f.clock.Now),
		idempotency.WithLogger(slog.New(&f.log)),
	}
	h, err := idempotency.New(f.store, f.handler, append(base, opts...)...)
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

func (f *flow) invoke(h *idempotency.Handler, o order) (string, error) {
	payload, err := json.Marshal(o)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := h.Invoke(context.Background(), payload)
	return string(resp), err
}

// dupRequests is what a duplicate costs on the flow's server.
func (f *flow) dupRequests() map[string]int {
	if f.srv.allOld {
		return map[string]int{"PutItem": 1}
	}
	return map[string]int{"PutItem": 1, "GetItem": 1}
}

func TestMiddlewareFlows(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range middlewareFlows {
				t.Run(tt.name, func(t *testing.T) { tt.run(newFlow(t, srv)) })
			}
		})
	}
}

var middlewareFlows = []struct {
	name string
	run  func(f *flow)
}{
	{"NewThenDuplicateReplays", func(f *flow) {
		h := f.wrap()
		f.reqs.take()
		if resp, err := f.invoke(h, order{ID: "1", Who: "first"}); err != nil || resp != `{"who":"first"}` {
			f.t.Fatalf("first Invoke = %s, %v", resp, err)
		}
		f.reqs.want(f.t, "a new event", map[string]int{"PutItem": 2})
		// The duplicate gets the first response, whatever its own fields.
		if resp, err := f.invoke(h, order{ID: "1", Who: "second"}); err != nil || resp != `{"who":"first"}` {
			f.t.Fatalf("duplicate Invoke = %s, %v", resp, err)
		}
		f.reqs.want(f.t, "a duplicate", f.dupRequests())
		if n := f.calls.Load(); n != 1 {
			f.t.Errorf("handler ran %d times, want 1", n)
		}
	}},
	{"LocalCacheHit", func(f *flow) {
		h := f.wrap(idempotency.WithLocalCache(8))
		if _, err := f.invoke(h, order{ID: "1", Who: "first"}); err != nil {
			f.t.Fatal(err)
		}
		f.reqs.take()
		if resp, err := f.invoke(h, order{ID: "1"}); err != nil || resp != `{"who":"first"}` {
			f.t.Fatalf("cached duplicate = %s, %v", resp, err)
		}
		f.reqs.want(f.t, "a duplicate answered by the local cache", map[string]int{})
	}},
	{"InProgress", func(f *flow) {
		h := f.wrap()
		done := make(chan error, 1)
		go func() { _, err := f.invoke(h, order{ID: "1", Who: "block"}); done <- err }()
		<-f.started
		_, err := f.invoke(h, order{ID: "1"})
		var ipe *idempotency.InProgressError
		if !errors.As(err, &ipe) || !ipe.LeaseEnd.Equal(f.clock.Now().Add(10*time.Second).Truncate(time.Millisecond)) {
			f.t.Errorf("duplicate while in progress error = %v, want *InProgressError with the lease end", err)
		}
		close(f.proceed)
		if err := <-done; err != nil {
			f.t.Fatal(err)
		}
	}},
	{"ExpiredLeaseTakeover", func(f *flow) {
		h := f.wrap()
		stale := make(chan string, 1)
		go func() { resp, _ := f.invoke(h, order{ID: "1", Who: "block"}); stale <- resp }()
		<-f.started
		// The first invocation's lease ends; a retry takes the key over.
		f.clock.Advance(10 * time.Second)
		if resp, err := f.invoke(h, order{ID: "1", Who: "retry"}); err != nil || resp != `{"who":"retry"}` {
			f.t.Fatalf("takeover Invoke = %s, %v", resp, err)
		}
		close(f.proceed)
		// The stale invocation still returns its own result (its effect
		// happened) but cannot overwrite the new owner's record.
		if resp := <-stale; resp != `{"who":"block"}` {
			f.t.Errorf("stale invocation returned %s", resp)
		}
		if logged := f.log.At(slog.LevelError); len(logged) != 1 {
			f.t.Errorf("%d errors logged, want 1 (the lost lease): %v", len(logged), logged)
		}
		if resp, err := f.invoke(h, order{ID: "1"}); err != nil || resp != `{"who":"retry"}` {
			f.t.Fatalf("duplicate after takeover = %s, %v; want the new owner's response", resp, err)
		}
	}},
	{"PayloadConflict", func(f *flow) {
		h := f.wrap(idempotency.WithPayloadValidation("amount"))
		if _, err := f.invoke(h, order{ID: "1", Amount: 10}); err != nil {
			f.t.Fatal(err)
		}
		if _, err := f.invoke(h, order{ID: "1", Amount: 20}); !errors.As(err, new(*idempotency.PayloadConflictError)) {
			f.t.Errorf("conflicting duplicate error = %v, want a PayloadConflictError", err)
		}
		if _, err := f.invoke(h, order{ID: "1", Amount: 10}); err != nil {
			f.t.Errorf("matching duplicate error = %v", err)
		}
		if n := f.calls.Load(); n != 1 {
			f.t.Errorf("handler ran %d times, want 1", n)
		}
	}},
	{"MalformedEvent", func(f *flow) {
		// An event that is not JSON is refused before any request, with
		// a new key and with the key of a COMPLETE record alike: no
		// record, no replay.
		h := f.wrap()
		const malformed = `{"who": tru, "id": "1"}`
		var invalid *idempotency.InvalidEventError
		f.reqs.take()
		if resp, err := h.Invoke(context.Background(), []byte(malformed)); !errors.As(err, &invalid) {
			f.t.Fatalf("malformed event with a new key = %s, %v; want an *idempotency.InvalidEventError", resp, err)
		}
		f.reqs.want(f.t, "a malformed event with a new key", map[string]int{})
		if resp, err := f.invoke(h, order{ID: "1", Who: "first"}); err != nil || resp != `{"who":"first"}` {
			f.t.Fatalf("the key after a malformed event = %s, %v; want it free", resp, err)
		}
		f.reqs.take()
		if resp, err := h.Invoke(context.Background(), []byte(malformed)); !errors.As(err, &invalid) {
			f.t.Fatalf("malformed duplicate = %s, %v; want an *idempotency.InvalidEventError, not the replay", resp, err)
		}
		f.reqs.want(f.t, "a malformed duplicate", map[string]int{})
		if n := f.calls.Load(); n != 1 {
			f.t.Errorf("handler ran %d times, want 1", n)
		}
	}},
	{"HandlerErrorReleases", func(f *flow) {
		h := f.wrap()
		f.reqs.take()
		if _, err := f.invoke(h, order{ID: "1", Who: "fail"}); !errors.Is(err, errDeclined) {
			f.t.Fatalf("Invoke error = %v, want the handler's own", err)
		}
		f.reqs.want(f.t, "a handler error", map[string]int{"PutItem": 1, "DeleteItem": 1})
		if resp, err := f.invoke(h, order{ID: "1", Who: "again"}); err != nil || resp != `{"who":"again"}` {
			f.t.Fatalf("retry after the error = %s, %v; want the handler run again", resp, err)
		}
	}},
	{"HandlerPanicReleases", func(f *flow) {
		h := f.wrap()
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					f.t.Errorf("recovered %v, want the handler's panic value", r)
				}
			}()
			_, _ = f.invoke(h, order{ID: "1", Who: "panic"})
		}()
		if resp, err := f.invoke(h, order{ID: "1", Who: "again"}); err != nil || resp != `{"who":"again"}` {
			f.t.Fatalf("retry after the panic = %s, %v; want the handler run again", resp, err)
		}
	}},
	{"CorruptedRecord", func(f *flow) {
		// The replay hook tells the test the key the middleware computed.
		var key string
		h := f.wrap(idempotency.WithReplayHook(func(_ context.Context, out receipt, rec *idempotency.Record) (receipt, error) {
			key = rec.Key
			return out, nil
		}))
		if _, err := f.invoke(h, order{ID: "1"}); err != nil {
			f.t.Fatal(err)
		}
		if _, err := f.invoke(h, order{ID: "1"}); err != nil || key == "" {
			f.t.Fatalf("duplicate = %v, key %q", err, key)
		}
		item := f.store.opts.key(key)
		item["status"] = &types.AttributeValueMemberS{Value: "BOGUS"}
		item["expiration"] = number(f.clock.Now().Add(time.Hour).Unix())
		if _, err := f.client.PutItem(f.t.Context(), &dynamodb.PutItemInput{TableName: aws.String(f.store.opts.TableName), Item: item}); err != nil {
			f.t.Fatal(err)
		}
		if _, err := f.invoke(h, order{ID: "1", Who: "x"}); !errors.As(err, new(*idempotency.CorruptedRecordError)) {
			f.t.Errorf("Invoke on a corrupted record error = %v, want a CorruptedRecordError", err)
		}
		if n := f.calls.Load(); n != 1 {
			f.t.Errorf("handler ran %d times, want 1: never on a corrupted record", n)
		}
	}},
	{"MissingKey", func(f *flow) {
		h := f.wrap(idempotency.WithKeyRequired(true))
		f.reqs.take()
		if _, err := f.invoke(h, order{Who: "x"}); !errors.As(err, new(*idempotency.MissingKeyError)) {
			f.t.Errorf("Invoke without a key error = %v, want a MissingKeyError", err)
		}
		f.reqs.want(f.t, "an event without a key", map[string]int{})
		if n := f.calls.Load(); n != 0 {
			f.t.Errorf("handler ran %d times, want 0", n)
		}
	}},
	{"ConcurrentDuplicatesRunOnce", func(f *flow) {
		h := f.wrap()
		const n = 100
		var (
			wg         sync.WaitGroup
			ok         atomic.Int32
			inProgress atomic.Int32
			other      atomic.Pointer[error]
		)
		returned := make(chan struct{}, n)
		for range n {
			wg.Go(func() {
				defer func() { returned <- struct{}{} }()
				resp, err := f.invoke(h, order{ID: "1", Who: "hold"})
				switch {
				case err == nil && resp == `{"who":"hold"}`:
					ok.Add(1)
				case errors.As(err, new(*idempotency.InProgressError)):
					inProgress.Add(1)
				default:
					other.Store(&err)
				}
			})
		}
		// The invocation that runs the handler holds its lease until the
		// others have returned (or ten seconds have passed, so that a bug
		// fails rather than hangs).
		timeout := time.After(10 * time.Second)
	wait:
		for range n - 1 {
			select {
			case <-returned:
			case <-timeout:
				break wait
			}
		}
		close(f.proceed)
		wg.Wait()
		if e := other.Load(); e != nil {
			f.t.Fatalf("unexpected result: %v", *e)
		}
		if calls := f.calls.Load(); calls != 1 {
			f.t.Fatalf("handler ran %d times for %d concurrent duplicates, want 1", calls, n)
		}
		if ok.Load() != 1 || inProgress.Load() != n-1 {
			f.t.Errorf("%d responses and %d InProgressErrors, want 1 and %d", ok.Load(), inProgress.Load(), n-1)
		}
	}},
}

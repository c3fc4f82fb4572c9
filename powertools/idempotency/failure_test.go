package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// userError is a handler error with identity, to check that the very value
// comes back.
type userError struct{ code int }

func (e *userError) Error() string { return "user error" }

func TestHandlerErrorIsReturnedUnchanged(t *testing.T) {
	t.Parallel()
	want := &userError{code: 7}
	f := newFixture(t, func(context.Context, order) (receipt, error) { return receipt{}, want })
	_, err := f.invoke(t, `{"order_id":"o-1"}`)
	if err != want {
		t.Fatalf("err = %#v, want the handler's own error value", err)
	}
	if !errors.Is(err, want) {
		t.Fatal("errors.Is lost the handler's error")
	}
	if n := len(f.store.Records()); n != 0 {
		t.Errorf("%d records after a failed handler, want the key released", n)
	}
}

func TestPanicReleasesAndRepanics(t *testing.T) {
	t.Parallel()
	type panicValue struct{ msg string }
	value := &panicValue{"kaboom"}
	f := newFixture(t, func(context.Context, order) (receipt, error) { panic(value) })
	func() {
		defer func() {
			if got := recover(); got != value {
				t.Errorf("recovered %v, want the handler's own panic value", got)
			}
		}()
		f.invoke(t, `{"order_id":"o-1"}`)
		t.Error("Invoke returned; want the panic to go on")
	}()
	if n := len(f.store.Records()); n != 0 {
		t.Errorf("%d records after a panic, want the key released", n)
	}
	if c := f.store.Counts(); c.Release != 1 || c.Complete != 0 {
		t.Errorf("store counts %+v, want one Release and no Complete", c)
	}
}

func TestStoreFailures(t *testing.T) {
	t.Parallel()
	errDown := errors.New("store down")
	corrupted := &idempotency.CorruptedRecordError{Key: keyOf("o-1"), Reason: "garbage"}
	const event = `{"order_id":"o-1","amount":2}`
	tests := []struct {
		name      string
		fail      map[string]error
		handler   func(context.Context, order) (receipt, error)
		wantErr   func(t *testing.T, err error)
		wantRuns  int32
		wantError bool // an error-level log naming the key
	}{
		{
			name: "acquire fails: PersistenceError, handler not run",
			fail: map[string]error{"acquire": errDown},
			wantErr: func(t *testing.T, err error) {
				var pe *idempotency.PersistenceError
				if !errors.As(err, &pe) || pe.Op != "acquire" || pe.Key != keyOf("o-1") || !errors.Is(err, errDown) || !errors.As(err, new(*idempotency.PersistenceError)) {
					t.Errorf("err = %v, want *PersistenceError{acquire, key} wrapping the store's error", err)
				}
			},
		},
		{
			name: "store reports a corrupted record: returned as is, handler not run",
			fail: map[string]error{"acquire": corrupted},
			wantErr: func(t *testing.T, err error) {
				if err != corrupted {
					t.Errorf("err = %v, want the store's *CorruptedRecordError", err)
				}
			},
		},
		{
			name: "complete fails after success: the result is returned and the failure logged",
			fail: map[string]error{"complete": errDown},
			wantErr: func(t *testing.T, err error) {
				if err != nil {
					t.Errorf("err = %v, want the handler's result", err)
				}
			},
			wantRuns:  1,
			wantError: true,
		},
		{
			name:    "release fails after a handler error: the user's error, the failure logged",
			fail:    map[string]error{"release": errDown},
			handler: func(context.Context, order) (receipt, error) { return receipt{}, errBoom },
			wantErr: func(t *testing.T, err error) {
				if err != errBoom {
					t.Errorf("err = %v, want the handler's error", err)
				}
			},
			wantRuns:  1,
			wantError: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.handler)
			h := idempotency.Wrap(&failingStore{Store: f.store, fail: tc.fail}, func(ctx context.Context, o order) (receipt, error) {
				f.calls.Add(1)
				if tc.handler != nil {
					return tc.handler(ctx, o)
				}
				return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
			}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithLogger(slog.New(f.logs)))
			resp, err := h.Invoke(context.Background(), []byte(event))
			tc.wantErr(t, err)
			if err == nil && string(resp) != `{"order_id":"o-1","charged":2}` {
				t.Errorf("response %s", resp)
			}
			if f.calls.Load() != tc.wantRuns {
				t.Errorf("handler ran %d times, want %d", f.calls.Load(), tc.wantRuns)
			}
			errs := f.logs.At(slog.LevelError)
			if tc.wantError != (len(errs) == 1 && errs[0].Attr("key") == keyOf("o-1")) {
				t.Errorf("error logs %+v, want an error log naming the key: %v", errs, tc.wantError)
			}
		})
	}
}

var errBoom = errors.New("boom")

func TestStoreReportingExpiredRecordsAsLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	store := &staleStore{Store: f.store}
	h := idempotency.Wrap(store, func(context.Context, order) (receipt, error) {
		f.calls.Add(1)
		return receipt{}, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"))
	_, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	var pe *idempotency.PersistenceError
	if !errors.As(err, &pe) || pe.Op != "acquire" {
		t.Fatalf("err = %v, want *PersistenceError from acquire", err)
	}
	if store.calls != 3 || f.calls.Load() != 0 {
		t.Errorf("%d Acquire calls and %d handler runs, want 3 and 0", store.calls, f.calls.Load())
	}
}

func TestResponseTooLargeToStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	big := strings.Repeat("x", 100)
	store := &tooLargeStore{Store: f.store, limit: 64}
	h := idempotency.Wrap(store, func(_ context.Context, o order) (string, error) {
		f.calls.Add(1)
		return big, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithLogger(slog.New(f.logs)))

	resp, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	if err != nil || string(resp) != `"`+big+`"` {
		t.Fatalf("first invocation: %s, %v; want the response", resp, err)
	}
	_, err = h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	var rns *idempotency.ResponseNotStoredError
	if !errors.As(err, &rns) || rns.Key != keyOf("o-1") || rns.Reason != idempotency.ReasonTooLarge {
		t.Fatalf("duplicate: err = %v, want *ResponseNotStoredError, too large", err)
	}
	if f.calls.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", f.calls.Load())
	}
	if recs := f.store.Records(); len(recs) != 1 || !recs[0].ResponseOmitted || recs[0].Status != idempotency.StatusComplete {
		t.Errorf("records %+v, want one COMPLETE record with the response omitted", recs)
	}
	var warned bool
	for _, w := range f.logs.At(slog.LevelWarn) {
		// The store's reason is in the warning: other than the item
		// limit, it may be a wrapper's offload that failed.
		warned = warned || w.Attr("key") == keyOf("o-1") && strings.Contains(w.Attr("error"), "item of 102 bytes")
	}
	if !warned {
		t.Errorf("want a warning naming the key whose response was omitted, and why")
	}
}

func TestUnencodableResponseCompletesWithoutResponse(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	h := idempotency.Wrap(f.store, func(_ context.Context, o order) (func(), error) {
		f.calls.Add(1)
		return func() {}, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"))
	_, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	if _, ok := err.(*json.UnsupportedTypeError); !ok {
		t.Fatalf("err = %#v, want encoding/json's own *UnsupportedTypeError", err)
	}
	_, err = h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	if !errors.As(err, new(*idempotency.ResponseNotStoredError)) || f.calls.Load() != 1 {
		t.Errorf("duplicate: err = %v after %d runs, want a ResponseNotStoredError after 1: the effect happened", err, f.calls.Load())
	}
}

func TestZeroHandler(t *testing.T) {
	t.Parallel()
	var h idempotency.Handler
	if _, err := h.Invoke(context.Background(), []byte(`{}`)); !errors.As(err, new(*idempotency.ConfigError)) {
		t.Errorf("zero Handler: err = %v, want ErrConfig", err)
	}
}

// TestPersistenceErrorNamesTheKeyOnce: a store's error that names the key
// already (dynamo's and redis's do) is not prefixed with it again.
func TestPersistenceErrorNamesTheKeyOnce(t *testing.T) {
	t.Parallel()
	const key = `orders#ab"c`
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{fmt.Errorf("dynamo: acquire %q: throttled", key), `idempotency: acquire record: dynamo: acquire "orders#ab\"c": throttled`},
		{fmt.Errorf("store of %s: throttled", key), `idempotency: acquire record: store of orders#ab"c: throttled`},
		{errors.New("throttled"), `idempotency: acquire record "orders#ab\"c": throttled`},
	} {
		if got := (&idempotency.PersistenceError{Op: "acquire", Key: key, Err: tc.cause}).Error(); got != tc.want {
			t.Errorf("Error() = %s\nwant      %s", got, tc.want)
		}
	}
}

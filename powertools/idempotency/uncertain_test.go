package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// bank is a downstream that charges once per key and may time out after
// charging, so that the caller cannot tell whether it did.
type bank struct {
	charges  map[string]int // key -> charges made
	timeout  bool           // the next charge is made, but its answer lost
	calls    int
	lookups  int
	lookupOK bool // false: the bank cannot answer a lookup
}

var errBankTimeout = errors.New("bank: timeout")

func (b *bank) charge(ctx context.Context, c charge) (chargeResult, error) {
	b.calls++
	key, _ := idempotency.KeyFromContext(ctx)
	b.charges[key]++
	if b.timeout {
		b.timeout = false
		return chargeResult{}, idempotency.Uncertain(errBankTimeout)
	}
	return chargeResult{ID: "ch_" + c.Customer, Cents: c.Cents}, nil
}

func (b *bank) lookup(_ context.Context, key string) (chargeResult, bool, error) {
	b.lookups++
	if !b.lookupOK {
		return chargeResult{}, false, errors.New("bank: lookup unavailable")
	}
	if b.charges[key] == 0 {
		return chargeResult{}, false, nil
	}
	return chargeResult{ID: "ch_found", Cents: 100}, true, nil
}

func uncertainWorld(t *testing.T, reconcile bool) (*bank, *idempotencytest.Store, func(charge) (chargeResult, error)) {
	b := &bank{charges: map[string]int{}, timeout: true, lookupOK: true}
	store := idempotencytest.NewStore()
	opts := []idempotency.Option{idempotency.WithLease(time.Minute)}
	if reconcile {
		opts = append(opts, idempotency.WithReconcile(b.lookup))
	}
	pay := idempotency.WrapFunc("pay", store, b.charge, opts...)
	return b, store, func(c charge) (chargeResult, error) { return pay(context.Background(), c) }
}

func wantStatus(t *testing.T, store *idempotencytest.Store, want idempotency.Status) {
	t.Helper()
	recs := store.Records()
	if len(recs) != 1 || recs[0].Status != want {
		t.Fatalf("records %+v, want one %s", recs, want)
	}
}

func TestUncertain(t *testing.T) {
	t.Parallel()
	alice := charge{"alice", 100}

	t.Run("the first call keeps the key UNCERTAIN", func(t *testing.T) {
		b, store, pay := uncertainWorld(t, false)
		_, err := pay(alice)
		var ue *idempotency.UncertainError
		if !errors.As(err, &ue) || !errors.Is(err, errBankTimeout) || ue.Key != "" {
			t.Fatalf("err = %v, want the handler's own UncertainError wrapping the timeout", err)
		}
		wantStatus(t, store, idempotency.StatusUncertain)
		rec := store.Records()[0]
		if rec.LeaseToken == "" || !rec.LeaseEnd.IsZero() || rec.Expiry.IsZero() {
			t.Errorf("UNCERTAIN record %+v: want the token kept, no lease, an expiry", rec)
		}
		// Without a reconcile function, duplicates wait for an operator.
		for range 2 {
			_, err = pay(alice)
			if !errors.As(err, &ue) || ue.Key != rec.Key || !errors.As(err, new(*idempotency.UncertainError)) {
				t.Fatalf("duplicate err = %v, want UncertainError for %s", err, rec.Key)
			}
		}
		if b.calls != 1 {
			t.Errorf("the bank was called %d times, want 1", b.calls)
		}
		// The operator learns that it did not happen and deletes the record.
		if err := store.Release(context.Background(), rec.Key, rec.LeaseToken); err != nil {
			t.Fatal(err)
		}
		if _, err := pay(alice); err != nil || b.calls != 2 {
			t.Errorf("after the operator: err %v, calls %d; want a run", err, b.calls)
		}
	})

	t.Run("reconcile finds the charge", func(t *testing.T) {
		b, store, pay := uncertainWorld(t, true)
		pay(alice)
		got, err := pay(alice)
		if err != nil || got.ID != "ch_found" {
			t.Fatalf("duplicate = %+v, %v; want the charge reconcile found", got, err)
		}
		again, err := pay(alice)
		if err != nil || again != got || b.lookups != 1 || b.calls != 1 {
			t.Errorf("replay = %+v, %v; lookups %d, calls %d; want the stored result, one lookup, one charge", again, err, b.lookups, b.calls)
		}
		wantStatus(t, store, idempotency.StatusComplete)
	})

	t.Run("reconcile finds no charge: the retry runs once", func(t *testing.T) {
		b, store, pay := uncertainWorld(t, true)
		pay(alice)
		key := store.Records()[0].Key
		b.charges[key] = 0 // the bank never got it
		got, err := pay(alice)
		if err != nil || got.ID != "ch_alice" || b.calls != 2 {
			t.Fatalf("retry = %+v, %v, calls %d; want the handler's charge, run once more", got, err, b.calls)
		}
		if _, err := pay(alice); err != nil || b.calls != 2 {
			t.Errorf("replay: err %v, calls %d; want the stored result and no third call", err, b.calls)
		}
		wantStatus(t, store, idempotency.StatusComplete)
	})

	t.Run("reconcile cannot tell: still UNCERTAIN", func(t *testing.T) {
		b, store, pay := uncertainWorld(t, true)
		pay(alice)
		b.lookupOK = false
		_, err := pay(alice)
		var ue *idempotency.UncertainError
		if !errors.As(err, &ue) || ue.Err == nil || b.calls != 1 {
			t.Fatalf("err = %v, calls %d; want UncertainError with reconcile's error and no rerun", err, b.calls)
		}
		wantStatus(t, store, idempotency.StatusUncertain)
		b.lookupOK = true
		if got, err := pay(alice); err != nil || got.ID != "ch_found" {
			t.Errorf("later duplicate = %+v, %v; want it reconciled", got, err)
		}
	})

	t.Run("one reconciler at a time", func(t *testing.T) {
		_, store, pay := uncertainWorld(t, true)
		pay(alice)
		rec := store.Records()[0]
		// Another invocation is reconciling it under a live lease.
		rec.LeaseEnd = time.Now().Add(time.Minute)
		rec.LeaseToken = "reconciler"
		store.Put(&rec)
		_, err := pay(alice)
		var ue *idempotency.UncertainError
		if !errors.As(err, &ue) || ue.LeaseEnd.IsZero() {
			t.Fatalf("err = %v, want UncertainError with the reconciler's lease end", err)
		}
	})

	t.Run("payload conflict comes first", func(t *testing.T) {
		b := &bank{charges: map[string]int{}, timeout: true, lookupOK: true}
		store := idempotencytest.NewStore()
		pay := idempotency.WrapFunc("pay", store, b.charge, idempotency.WithEventKey("customer"),
			idempotency.WithPayloadValidation("cents"), idempotency.WithReconcile(b.lookup))
		pay(context.Background(), alice)
		_, err := pay(context.Background(), charge{"alice", 999})
		if !errors.As(err, new(*idempotency.PayloadConflictError)) || b.lookups != 0 {
			t.Errorf("err = %v, lookups %d; want a conflict before any reconcile", err, b.lookups)
		}
	})
}

// TestReconcileTypeChecked checks that a reconcile function whose result
// is not the wrapped function's fails when the wrapper is built, not on
// every duplicate of an UNCERTAIN record for the whole expiry window.
func TestReconcileTypeChecked(t *testing.T) {
	t.Parallel()
	handler := func(context.Context, order) (receipt, error) { return receipt{}, nil }
	wrong := idempotency.WithReconcile(func(context.Context, string) (string, bool, error) { return "", false, nil })
	right := idempotency.WithReconcile(func(context.Context, string) (receipt, bool, error) { return receipt{}, false, nil })
	store := idempotencytest.NewStore()
	var ce *idempotency.ConfigError
	if _, err := idempotency.New(store, handler, idempotency.WithKeyPrefix(prefix), wrong); !errors.As(err, &ce) || ce.Name != "WithReconcile" {
		t.Errorf("New with a reconcile of string for a handler of receipt = %v, want a *ConfigError for WithReconcile", err)
	}
	if _, err := newFunc("charge", store, handler, wrong); !errors.As(err, &ce) || ce.Name != "WithReconcile" {
		t.Errorf("NewFunc with a reconcile of string for a function of receipt = %v, want a *ConfigError for WithReconcile", err)
	}
	if _, err := idempotency.New(store, handler, idempotency.WithKeyPrefix(prefix), right); err != nil {
		t.Errorf("New with a matching reconcile = %v", err)
	}
}

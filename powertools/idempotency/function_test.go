package idempotency_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

type charge struct {
	Customer string `json:"customer"`
	Cents    int    `json:"cents"`
}

type chargeResult struct {
	ID    string `json:"id"`
	Cents int    `json:"cents"`
}

func TestWrapFunc(t *testing.T) {
	t.Parallel()
	t.Run("keyed on the whole argument", func(t *testing.T) {
		store := idempotencytest.NewStore()
		runs := 0
		pay := idempotency.WrapFunc("pay", store, func(_ context.Context, c charge) (*chargeResult, error) {
			runs++
			return &chargeResult{ID: "ch_1", Cents: c.Cents}, nil
		})
		first, err := pay(context.Background(), charge{"alice", 100})
		if err != nil {
			t.Fatal(err)
		}
		again, err := pay(context.Background(), charge{"alice", 100})
		if err != nil {
			t.Fatal(err)
		}
		if runs != 1 || *again != *first || again == first {
			t.Errorf("runs %d, results %+v %+v; want one run and an equal result decoded from the store", runs, first, again)
		}
		if _, err := pay(context.Background(), charge{"alice", 200}); err != nil || runs != 2 {
			t.Errorf("another argument: err %v, runs %d; want a second run", err, runs)
		}
		sum := sha256.Sum256([]byte(`{"cents":100,"customer":"alice"}`))
		if recs := store.Records(); recs[0].Key != "pay#"+hex.EncodeToString(sum[:]) && recs[1].Key != "pay#"+hex.EncodeToString(sum[:]) {
			t.Errorf("keys %s, %s; want pay# and the hash of the canonical argument", recs[0].Key, recs[1].Key)
		}
	})

	t.Run("keyed on a field, with payload validation", func(t *testing.T) {
		runs := 0
		pay := idempotency.WrapFunc("pay", idempotencytest.NewStore(), func(_ context.Context, c charge) (chargeResult, error) {
			runs++
			return chargeResult{ID: c.Customer, Cents: c.Cents}, nil
		}, idempotency.WithEventKey("customer"), idempotency.WithPayloadValidation("cents"))
		pay(context.Background(), charge{"alice", 100})
		if _, err := pay(context.Background(), charge{"alice", 200}); !errors.As(err, new(*idempotency.PayloadConflictError)) {
			t.Errorf("err = %v, want a PayloadConflictError", err)
		}
		if runs != 1 {
			t.Errorf("runs %d, want 1", runs)
		}
	})

	t.Run("error and KeyFromContext", func(t *testing.T) {
		want := &userError{}
		var key string
		f := idempotency.WrapFunc("f", idempotencytest.NewStore(), func(ctx context.Context, n int) (int, error) {
			key, _ = idempotency.KeyFromContext(ctx)
			return 0, want
		})
		if _, err := f(context.Background(), 7); err != want {
			t.Errorf("err = %v, want the function's own error", err)
		}
		sum := sha256.Sum256([]byte(`7`))
		if key != "f#"+hex.EncodeToString(sum[:]) {
			t.Errorf("KeyFromContext = %q", key)
		}
	})

	t.Run("a stored result that no longer decodes is a corrupted record", func(t *testing.T) {
		store := idempotencytest.NewStore()
		idempotency.WrapFunc("f", store, func(context.Context, int) (string, error) { return "text", nil })(context.Background(), 1)
		g := idempotency.WrapFunc("f", store, func(context.Context, int) (int, error) { return 1, nil })
		if _, err := g(context.Background(), 1); !errors.As(err, new(*idempotency.CorruptedRecordError)) {
			t.Errorf("err = %v, want a CorruptedRecordError", err)
		}
	})

	t.Run("an argument that cannot be encoded", func(t *testing.T) {
		f := idempotency.WrapFunc("f", idempotencytest.NewStore(), func(context.Context, chan int) (int, error) { return 1, nil })
		if _, err := f(context.Background(), make(chan int)); err == nil {
			t.Error("want an error")
		}
	})

	t.Run("disabled", func(t *testing.T) {
		runs := 0
		f := idempotency.WrapFunc("f", nil, func(context.Context, int) (int, error) { runs++; return 1, nil }, idempotency.WithDisabled(true))
		f(context.Background(), 1)
		f(context.Background(), 1)
		if runs != 2 {
			t.Errorf("runs %d, want 2", runs)
		}
	})
}

func TestWrapFuncInsideHandlerSeesItsOwnKey(t *testing.T) {
	t.Parallel()
	store := idempotencytest.NewStore()
	var inner []string
	ship := idempotency.WrapFunc("ship", store, func(ctx context.Context, c charge) (int, error) {
		k, _ := idempotency.KeyFromContext(ctx)
		inner = append(inner, k)
		return 1, nil
	}, idempotency.WithEventKey("customer"))
	h := idempotency.Wrap(store, func(ctx context.Context, c charge) (int, error) {
		return ship(ctx, c)
	}, idempotency.WithKeyPrefix("orders"), idempotency.WithEventKey("cents"))
	h.Invoke(context.Background(), []byte(`{"customer":"alice","cents":1}`))
	h.Invoke(context.Background(), []byte(`{"customer":"","cents":2}`)) // no key for ship
	sum := sha256.Sum256([]byte(`"alice"`))
	if len(inner) != 2 || inner[0] != "ship#"+hex.EncodeToString(sum[:]) || inner[1] != "" {
		t.Errorf("keys seen by the inner function: %q; want its own key, then none", inner)
	}
}

// TestWrapFuncPrefixHasTheFunctionName checks that two Lambda functions
// sharing a table and a wrapper's name keep their records apart: the
// prefix is "<function>.<name>", as in Powertools, and name alone outside
// Lambda.
func TestWrapFuncPrefixHasTheFunctionName(t *testing.T) {
	store := idempotencytest.NewStore()
	runs := 0
	charge := func(_ context.Context, id string) (string, error) {
		runs++
		return "charged " + id, nil
	}
	for i, fn := range []string{"payments-a", "payments-b", ""} {
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", fn)
		wrapped := idempotency.WrapFunc("charge", store, charge)
		if _, err := wrapped(context.Background(), "o-1"); err != nil {
			t.Fatal(err)
		}
		if runs != i+1 {
			t.Fatalf("function %q: the charge ran %d times in all, want %d: its records are its own", fn, runs, i+1)
		}
		want := "charge#"
		if fn != "" {
			want = fn + ".charge#"
		}
		recs := store.Records()
		found := false
		for _, r := range recs {
			found = found || strings.HasPrefix(r.Key, want)
		}
		if !found {
			t.Errorf("function %q: no record keyed %s...; records %v", fn, want, recs)
		}
	}
}

package idempotency_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

type outerKey struct{}

// TestHandlerContextIsTheInvocations checks that the context the handler
// gets behaves as the invocation's own, plus the key: values set by the
// caller are visible, and the caller's cancellation, with its cause,
// reaches contexts the handler derives from it.
func TestHandlerContextIsTheInvocations(t *testing.T) {
	t.Parallel()
	cause := errors.New("caller gave up")
	ctx, cancel := context.WithCancelCause(context.WithValue(context.Background(), outerKey{}, "outer"))
	defer cancel(nil)
	h := idempotency.Wrap(idempotencytest.NewStore(), func(ctx context.Context, _ struct{}) (string, error) {
		if key, ok := idempotency.KeyFromContext(ctx); !ok || key != keyOf("o-1") {
			t.Errorf("KeyFromContext = %q, %v", key, ok)
		}
		if v := ctx.Value(outerKey{}); v != "outer" {
			t.Errorf("the caller's value is %v, want outer", v)
		}
		child, stop := context.WithCancel(ctx)
		defer stop()
		cancel(cause)
		<-child.Done() // a hang here is the failure
		if got := context.Cause(child); got != cause {
			t.Errorf("the handler's derived context has cause %v, want %v", got, cause)
		}
		return "ok", nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("id"))
	if _, err := h.Invoke(ctx, []byte(`{"id":"o-1"}`)); err != nil {
		t.Fatal(err)
	}
}

// TestKeyFromContextAfterTheHandler checks that a goroutine the handler
// starts may read the key after the handler has returned, while the
// middleware completes the record: fire-and-forget logging, say. Run with
// -race, which reported the key's record being rewritten under the read.
func TestKeyFromContextAfterTheHandler(t *testing.T) {
	t.Parallel()
	read := make(chan string)
	h := idempotency.Wrap(idempotencytest.NewStore(), func(ctx context.Context, _ struct{}) (string, error) {
		go func() {
			for i := 0; i < 1000; i++ {
				idempotency.KeyFromContext(ctx)
			}
			key, _ := idempotency.KeyFromContext(ctx)
			read <- key
		}()
		return "ok", nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("id"))
	if _, err := h.Invoke(context.Background(), []byte(`{"id":"o-1"}`)); err != nil {
		t.Fatal(err)
	}
	if key := <-read; key != keyOf("o-1") {
		t.Errorf("KeyFromContext after the handler = %q, want %q", key, keyOf("o-1"))
	}
}

package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// slowCompleteStore takes a while to complete, as a store whose request is
// on the network does, and fails with the context's error if the context
// ends first, as the AWS SDK does.
type slowCompleteStore struct {
	*idempotencytest.Store
	delay time.Duration
}

func (s *slowCompleteStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	select {
	case <-time.After(s.delay):
		return s.Store.Complete(ctx, rec)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The invocation's deadline passes while the COMPLETED write is on its
// way: the write is still made, so that a duplicate gets the replay and
// the handler does not run twice.
func TestDeadlinePassesDuringComplete(t *testing.T) {
	t.Parallel()
	store := &slowCompleteStore{Store: idempotencytest.NewStore(), delay: 500 * time.Millisecond}
	runs := 0
	h := idempotency.Wrap(store, func(context.Context, map[string]string) (string, error) {
		runs++
		return "done", nil
	}, idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("test"))
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	if _, err := h.Invoke(ctx, []byte(`{"id":"1"}`)); err != nil {
		t.Fatalf("call: %v", err)
	}
	if _, err := h.Invoke(context.Background(), []byte(`{"id":"1"}`)); err != nil {
		t.Fatalf("duplicate: %v", err)
	}
	if runs != 1 {
		t.Errorf("the handler ran %d times, want 1: the COMPLETED write was cancelled with the invocation's context", runs)
	}
}

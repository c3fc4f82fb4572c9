package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A duplicate that arrives while the first invocation still runs waits for
// it and gets its response, instead of an InProgressError.
func ExampleWithWaitForInProgress() {
	started, finish := make(chan struct{}), make(chan struct{})
	charge := func(_ context.Context, o struct {
		OrderID string `json:"order_id"`
	}) (string, error) {
		close(started)
		<-finish // a slow payment provider
		return "charged " + o.OrderID, nil
	}
	h := idempotency.Wrap(idempotencytest.NewStore(), charge,
		idempotency.WithKeyPrefix("payments"), idempotency.WithEventKey("order_id"),
		idempotency.WithWaitForInProgress(true))
	event := []byte(`{"order_id":"o-1"}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // Lambda's deadline
	defer cancel()

	first := make(chan []byte)
	go func() {
		resp, _ := h.Invoke(ctx, event)
		first <- resp
	}()
	<-started
	time.AfterFunc(200*time.Millisecond, func() { close(finish) })
	retry, err := h.Invoke(ctx, event) // the client retries while the first runs
	fmt.Printf("first: %s, retry: %s, error: %v\n", <-first, retry, err)
	// Output: first: "charged o-1", retry: "charged o-1", error: <nil>
}

// Under AbandonBlock, the key of an invocation that ended without
// completing (it timed out mid-payment, say) stays locked until its record
// expires, and duplicates are told so.
func ExampleWithAbandonPolicy() {
	store := idempotencytest.NewStore()
	h := idempotency.Wrap(store, func(context.Context, map[string]any) (string, error) { return "charged", nil },
		idempotency.WithKeyPrefix("payments"), idempotency.WithEventKey("order_id"),
		idempotency.WithAbandonPolicy(idempotency.AbandonBlock))
	event := []byte(`{"order_id":"o-1"}`)

	// The record of an invocation whose deadline passed a minute ago,
	// as the block policy writes it: the lease lasts until expiry.
	key, _, _ := h.KeyOf(event)
	now := time.Now()
	store.Put(&idempotency.Record{Key: key, Status: idempotency.StatusInProgress, LeaseToken: "dead",
		Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), Deadline: now.Add(-time.Minute)})

	_, err := h.Invoke(context.Background(), event)
	var abandoned *idempotency.AbandonedError
	fmt.Println(errors.As(err, &abandoned))
	// Output: true
}

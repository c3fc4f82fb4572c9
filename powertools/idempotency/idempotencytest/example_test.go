package idempotencytest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A second Acquire of a key finds the first invocation's record; once the
// record is completed, a duplicate gets the stored response.
func ExampleStore() {
	ctx := context.Background()
	store := idempotencytest.NewStore()
	now := time.Now()
	first := &idempotency.Record{
		Key: "orders#1", Status: idempotency.StatusInProgress, LeaseToken: "first",
		Expiry: now.Add(time.Hour), LeaseEnd: now.Add(30 * time.Second),
	}
	existing, _ := store.Acquire(ctx, first, now)
	fmt.Println("first acquire wrote its record:", existing == nil)

	second := *first
	second.LeaseToken = "second"
	existing, _ = store.Acquire(ctx, &second, now)
	fmt.Println("second acquire found:", existing.Status, existing.LeaseToken)

	done := *first
	done.Status = idempotency.StatusComplete
	done.Response = []byte(`{"order":1}`)
	_ = store.Complete(ctx, &done)
	existing, _ = store.Acquire(ctx, &second, now)
	fmt.Println("duplicate replays:", string(existing.Response))

	err := store.Release(ctx, "orders#1", "second")
	fmt.Println("release by the loser:", errors.Is(err, idempotency.ErrLeaseLost))
	fmt.Printf("requests: %+v\n", store.Counts())
	// Output:
	// first acquire wrote its record: true
	// second acquire found: INPROGRESS first
	// duplicate replays: {"order":1}
	// release by the loser: true
	// requests: {Acquire:3 Complete:1 Release:1 Get:0}
}

// Put seeds a record that a store could not decode, to test how the code
// under test handles a corrupted record.
func ExampleStore_Put() {
	store := idempotencytest.NewStore()
	now := time.Now()
	store.Put(&idempotency.Record{Key: "orders#2", Status: "BOGUS", Expiry: now.Add(time.Hour)})
	_, err := store.Get(context.Background(), "orders#2")
	fmt.Println(errors.As(err, new(*idempotency.CorruptedRecordError)))
	// Output: true
}

// A Store implementation is checked with the conformance suite from its own
// test (the function name must start with Test in a _test.go file).
// (Compiled, not run: TestStore needs the *testing.T of a running test.)
func ExampleTestStore() {
	_ = func(t *testing.T) {
		idempotencytest.TestStore(t, func(t *testing.T) idempotency.Store {
			return idempotencytest.NewStore() // or the store under test
		})
	}
}

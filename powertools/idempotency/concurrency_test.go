package idempotency_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func TestConcurrentDuplicatesRunTheHandlerOnce(t *testing.T) {
	t.Parallel()
	const n = 100
	var runs atomic.Int32
	release := make(chan struct{})
	fn := func(ctx context.Context, o order) (receipt, error) {
		runs.Add(1)
		<-release // hold the lease while the others arrive
		return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
	}
	h := idempotency.Wrap(idempotencytest.NewStore(), fn, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"))

	var wg sync.WaitGroup
	var responses, inProgress atomic.Int32
	errs := make(chan error, n)
	returned := make(chan struct{}, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { returned <- struct{}{} }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			resp, err := h.Invoke(ctx, []byte(`{"order_id":"o-1","amount":5}`))
			switch {
			case errors.As(err, new(*idempotency.InProgressError)):
				inProgress.Add(1)
			case err != nil:
				errs <- err
			case string(resp) != `{"order_id":"o-1","charged":5}`:
				errs <- errors.New("wrong response " + string(resp))
			default:
				responses.Add(1)
			}
		}()
	}
	// The owner holds its lease until every other invocation has returned
	// (or ten seconds have passed, so that a bug fails rather than hangs).
	timeout := time.After(10 * time.Second)
wait:
	for range n - 1 {
		select {
		case <-returned:
		case <-timeout:
			break wait
		}
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", runs.Load())
	}
	if responses.Load() != 1 || inProgress.Load() != n-1 {
		t.Errorf("%d responses and %d in-progress errors, want 1 and %d", responses.Load(), inProgress.Load(), n-1)
	}
	// After the owner completed, a duplicate gets the response.
	resp, err := h.Invoke(context.Background(), []byte(`{"amount":5,"order_id":"o-1"}`))
	if err != nil || string(resp) != `{"order_id":"o-1","charged":5}` {
		t.Errorf("after completion: %s, %v; want the stored response", resp, err)
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran again after completion")
	}
}

func TestConcurrentDistinctKeys(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	fn := func(ctx context.Context, o order) (receipt, error) {
		runs.Add(1)
		return receipt{OrderID: o.OrderID}, nil
	}
	h := idempotency.Wrap(idempotencytest.NewStore(), fn, idempotency.WithKeyPrefix(prefix),
		idempotency.WithEventKey("order_id"), idempotency.WithLocalCache(8))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				id := string(rune('a' + i%25))
				resp, err := h.Invoke(context.Background(), []byte(`{"order_id":"`+id+`"}`))
				if err != nil && !errors.As(err, new(*idempotency.InProgressError)) {
					t.Error(err)
				}
				if err == nil && string(resp) != `{"order_id":"`+id+`","charged":0}` {
					t.Errorf("key %s got response %s", id, resp)
				}
			}
		}()
	}
	wg.Wait()
	if runs.Load() != 25 {
		t.Errorf("handler ran %d times for 25 keys, want 25", runs.Load())
	}
}

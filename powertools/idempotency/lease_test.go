package idempotency_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// leaseRecorder returns a fixture whose handler notes the lease end of its
// own IN_PROGRESS record, and checks that record's other fields.
func leaseRecorder(t *testing.T, opts ...idempotency.Option) (*fixture, *[]time.Time) {
	var f *fixture
	var seen []time.Time
	f = newFixture(t, func(ctx context.Context, o order) (receipt, error) {
		rec, err := f.store.Get(ctx, keyOf(o.OrderID))
		if err != nil {
			t.Error(err)
			return receipt{}, err
		}
		seen = append(seen, rec.LeaseEnd)
		if rec.Status != idempotency.StatusInProgress || !rec.Expiry.Equal(f.clock.Now().Add(time.Hour)) || len(rec.LeaseToken) != 32 {
			t.Errorf("IN_PROGRESS record %+v: want expiry now + 1h and a 128-bit hex token", rec)
		}
		return receipt{}, nil
	}, opts...)
	return f, &seen
}

func TestLeaseEndsAtTheContextDeadline(t *testing.T) {
	t.Parallel()
	f, seen := leaseRecorder(t)
	deadline := f.clock.Now().Add(42 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if _, err := f.h.Invoke(ctx, []byte(`{"order_id":"o-1"}`)); err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 1 || !(*seen)[0].Equal(deadline) {
		t.Errorf("lease ends %v, want the deadline %v", *seen, deadline)
	}
	if w := f.logs.At(slog.LevelWarn); len(w) != 0 {
		t.Errorf("warnings %+v, want none with a deadline", w)
	}
}

func TestLeaseWithoutDeadlineWarnsOnce(t *testing.T) {
	t.Parallel()
	f, seen := leaseRecorder(t, idempotency.WithLease(90*time.Second))
	for _, id := range []string{"a", "b"} {
		if _, err := f.h.Invoke(context.Background(), []byte(`{"order_id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	want := f.clock.Now().Add(90 * time.Second)
	if len(*seen) != 2 {
		t.Fatalf("saw %d leases, want one per invocation, 2", len(*seen))
	}
	for _, got := range *seen {
		if !got.Equal(want) {
			t.Errorf("lease ends %v, want now + WithLease = %v", got, want)
		}
	}
	if got := len(f.logs.At(slog.LevelWarn)); got != 1 {
		t.Errorf("%d warnings, want one per Handler", got)
	}
}

// TestLeaseTakeover runs a slow invocation whose lease ends while it runs:
// a duplicate takes the key over and completes; the slow one then finds its
// lease lost, returns its result anyway, logs an error with the key, and
// leaves the new owner's record alone.
func TestLeaseTakeover(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	started, finish := make(chan struct{}), make(chan struct{})
	slow := idempotency.Wrap(f.store, func(ctx context.Context, o order) (receipt, error) {
		close(started)
		<-finish
		return receipt{OrderID: "slow"}, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"),
		idempotency.WithClock(f.clock.Now), idempotency.WithLogger(slog.New(f.logs)))

	type outcome struct {
		resp []byte
		err  error
	}
	done := make(chan outcome)
	go func() {
		ctx, cancel := context.WithDeadline(context.Background(), f.clock.Now().Add(10*time.Second))
		defer cancel()
		resp, err := slow.Invoke(ctx, []byte(`{"order_id":"o-1"}`))
		done <- outcome{resp, err}
	}()
	<-started

	f.clock.Advance(11 * time.Second) // the slow invocation's lease has ended
	resp, err := f.invoke(t, `{"order_id":"o-1","amount":3}`)
	if err != nil || string(resp) != `{"order_id":"o-1","charged":3}` {
		t.Fatalf("takeover: %s, %v", resp, err)
	}
	close(finish)
	got := <-done
	if got.err != nil || string(got.resp) != `{"order_id":"slow","charged":0}` {
		t.Errorf("stale invocation: %s, %v; want its own result", got.resp, got.err)
	}
	errs := f.logs.At(slog.LevelError)
	if len(errs) != 1 || errs[0].Attr("key") != keyOf("o-1") {
		t.Errorf("error logs %+v, want one naming the key", errs)
	}
	recs := f.store.Records()
	if len(recs) != 1 || string(recs[0].Response) != `{"order_id":"o-1","charged":3}` {
		t.Errorf("records %+v, want the new owner's response kept", recs)
	}
}

// ownTokenStore answers every successful Acquire as a retried request would
// see it: the write happened but the reply was lost, so the retry finds the
// caller's own record.
type ownTokenStore struct{ idempotency.Store }

func (s ownTokenStore) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	existing, err := s.Store.Acquire(ctx, rec, now)
	if existing != nil || err != nil {
		return existing, err
	}
	cp := *rec
	return &cp, nil
}

func TestOwnLeaseTokenCarriesOn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	h := idempotency.Wrap(ownTokenStore{f.store}, func(ctx context.Context, o order) (receipt, error) {
		f.calls.Add(1)
		return receipt{OrderID: o.OrderID}, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"))
	resp, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	if err != nil || string(resp) != `{"order_id":"o-1","charged":0}` || f.calls.Load() != 1 {
		t.Fatalf("got %s, %v after %d calls; want the handler run as owner", resp, err, f.calls.Load())
	}
}

// TestExpiryCountsFromTheEndOfTheHandler checks what WithExpiresAfter
// documents: a response is replayed for that long after the handler ends,
// however long the handler ran.
func TestExpiryCountsFromTheEndOfTheHandler(t *testing.T) {
	t.Parallel()
	var f *fixture
	f = newFixture(t, func(context.Context, order) (receipt, error) {
		f.clock.Advance(10 * time.Minute)
		return receipt{}, nil
	})
	if _, err := f.invoke(t, `{"order_id":"o-1"}`); err != nil {
		t.Fatal(err)
	}
	rec, err := f.store.Get(context.Background(), keyOf("o-1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := f.clock.Now().Add(time.Hour); rec.Status != idempotency.StatusComplete || !rec.Expiry.Equal(want) {
		t.Errorf("record %+v: want COMPLETE, expiring at %v", rec, want)
	}
}

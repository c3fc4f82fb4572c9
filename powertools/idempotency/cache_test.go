package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func TestLocalCache(t *testing.T) {
	t.Parallel()
	const event = `{"order_id":"o-1","amount":5}`
	const response = `{"order_id":"o-1","charged":5}`

	t.Run("a hit makes no store call", func(t *testing.T) {
		f := newFixture(t, nil, idempotency.WithLocalCache(2))
		if _, err := f.invoke(t, event); err != nil {
			t.Fatal(err)
		}
		before := f.store.Counts()
		for range 3 {
			resp, err := f.invoke(t, event)
			if err != nil || string(resp) != response {
				t.Fatalf("cache hit: %s, %v", resp, err)
			}
		}
		if after := f.store.Counts(); after != before {
			t.Errorf("store counts went from %+v to %+v, want no calls on hits", before, after)
		}
		if f.calls.Load() != 1 {
			t.Errorf("handler ran %d times, want 1", f.calls.Load())
		}
	})

	// The caller owns what Invoke returns: bytes it changes in place,
	// the first response's or a replay's, are not what later replays
	// return.
	t.Run("the cache keeps its own copy", func(t *testing.T) {
		f := newFixture(t, nil, idempotency.WithLocalCache(2))
		for range 3 {
			resp, err := f.invoke(t, event)
			if err != nil || string(resp) != response {
				t.Fatalf("got %s, %v; want %s", resp, err, response)
			}
			clear(resp)
		}
		if f.calls.Load() != 1 || f.store.Counts().Acquire != 1 {
			t.Errorf("%d runs, %d Acquire calls; want 1 and 1: the replays come from the cache", f.calls.Load(), f.store.Counts().Acquire)
		}
	})

	t.Run("a replayed record is cached too", func(t *testing.T) {
		f := newFixture(t, nil, idempotency.WithLocalCache(2))
		f.store.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusComplete,
			Expiry: f.clock.Now().Add(time.Hour), Response: []byte(`"seeded"`)})
		for range 2 {
			if resp, err := f.invoke(t, event); err != nil || string(resp) != `"seeded"` {
				t.Fatalf("got %s, %v; want the seeded response", resp, err)
			}
		}
		if c := f.store.Counts(); c.Acquire != 1 {
			t.Errorf("%d Acquire calls, want 1: the second replay comes from the cache", c.Acquire)
		}
	})

	t.Run("an expired entry goes back to the store", func(t *testing.T) {
		f := newFixture(t, nil, idempotency.WithLocalCache(2), idempotency.WithExpiresAfter(time.Minute))
		f.invoke(t, event)
		f.clock.Advance(time.Minute)
		f.invoke(t, event)
		if c := f.store.Counts(); c.Acquire != 2 || f.calls.Load() != 2 {
			t.Errorf("%d Acquire calls and %d runs, want 2 and 2: the record had expired", c.Acquire, f.calls.Load())
		}
	})

	t.Run("least recently used is evicted", func(t *testing.T) {
		f := newFixture(t, nil, idempotency.WithLocalCache(2))
		for _, id := range []string{"a", "b", "a", "c"} { // c evicts b, the least recently used
			f.invoke(t, `{"order_id":"`+id+`"}`)
		}
		before := f.store.Counts().Acquire
		f.invoke(t, `{"order_id":"a"}`)
		f.invoke(t, `{"order_id":"c"}`)
		if got := f.store.Counts().Acquire; got != before {
			t.Errorf("a and c should be cached")
		}
		f.invoke(t, `{"order_id":"b"}`)
		if got := f.store.Counts().Acquire; got != before+1 {
			t.Errorf("b should have been evicted")
		}
	})

	t.Run("a hit is checked against payload validation", func(t *testing.T) {
		f := newFixture(t, nil, idempotency.WithLocalCache(2), idempotency.WithPayloadValidation("amount"))
		f.invoke(t, event)
		before := f.store.Counts()
		_, err := f.invoke(t, `{"order_id":"o-1","amount":6}`)
		if !errors.As(err, new(*idempotency.PayloadConflictError)) {
			t.Errorf("err = %v, want a PayloadConflictError from the cached record", err)
		}
		if f.store.Counts() != before {
			t.Errorf("store was called")
		}
	})

	t.Run("a hit calls the replay hook with a copy", func(t *testing.T) {
		var hooked []string
		hook := func(_ context.Context, out receipt, rec *idempotency.Record) (receipt, error) {
			hooked = append(hooked, rec.Key)
			rec.Key = "scribbled" // must not reach the cache
			return out, nil
		}
		f := newFixture(t, nil, idempotency.WithLocalCache(2), idempotency.WithReplayHook(hook))
		for range 3 {
			if resp, err := f.invoke(t, event); err != nil || string(resp) != response {
				t.Fatalf("got %s, %v", resp, err)
			}
		}
		if len(hooked) != 2 || hooked[0] != keyOf("o-1") || hooked[1] != keyOf("o-1") {
			t.Errorf("hook saw %v, want the key twice", hooked)
		}
	})
}

func TestReplayHook(t *testing.T) {
	t.Parallel()
	var got []*idempotency.Record
	var returned bool
	hook := func(ctx context.Context, out receipt, rec *idempotency.Record) (receipt, error) {
		if returned {
			t.Error("hook called after the response was returned")
		}
		got = append(got, rec)
		return out, nil
	}
	f := newFixture(t, nil, idempotency.WithReplayHook(hook))
	f.invoke(t, `{"order_id":"o-1","amount":1}`)
	if len(got) != 0 {
		t.Fatal("hook called on the first invocation")
	}
	f.invoke(t, `{"order_id":"o-1","amount":1}`)
	returned = true
	if len(got) != 1 || got[0].Key != keyOf("o-1") || got[0].Status != idempotency.StatusComplete || string(got[0].Response) != `{"order_id":"o-1","charged":1}` {
		t.Errorf("hook got %+v, want the COMPLETE record", got)
	}
}

func TestKeyFromContext(t *testing.T) {
	t.Parallel()
	var keys []string
	var oks []bool
	fn := func(ctx context.Context, o order) (receipt, error) {
		k, ok := idempotency.KeyFromContext(ctx)
		keys, oks = append(keys, k), append(oks, ok)
		return receipt{}, nil
	}
	h := idempotency.Wrap(idempotencytest.NewStore(), fn, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"))
	h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	h.Invoke(context.Background(), []byte(`{"amount":1}`)) // no key: no idempotency
	if keys[0] != keyOf("o-1") || !oks[0] {
		t.Errorf("KeyFromContext = %q, %v; want %q, true", keys[0], oks[0], keyOf("o-1"))
	}
	if keys[1] != "" || oks[1] {
		t.Errorf("without a key: KeyFromContext = %q, %v; want \"\", false", keys[1], oks[1])
	}
	if _, ok := idempotency.KeyFromContext(context.Background()); ok {
		t.Error("KeyFromContext found a key in a bare context")
	}
}

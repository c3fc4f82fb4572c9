package idempotencytest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// BenchmarkStore measures the store's share of a middleware call: a first
// call (Acquire of a new key, then Complete) and a replay (Acquire finding
// the COMPLETE record), on a store that already holds many keys.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	now := time.Unix(1700000000, 0)
	response := []byte(`{"ok":true,"id":"go-123-1732900000000000000-42"}`)
	newRecord := func(key string) *idempotency.Record {
		return &idempotency.Record{
			Key: key, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour),
			LeaseEnd: now.Add(30 * time.Second), LeaseToken: "0123456789abcdef0123456789abcdef",
		}
	}
	complete := func(b *testing.B, s *Store, rec *idempotency.Record) {
		done := *rec
		done.Status, done.LeaseEnd, done.Response = idempotency.StatusComplete, time.Time{}, response
		if err := s.Complete(ctx, &done); err != nil {
			b.Fatal(err)
		}
	}
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = "bench#" + strconv.Itoa(i) + "0123456789abcdef0123456789abcdef"
	}

	b.Run("first_call", func(b *testing.B) {
		s := NewStore()
		for i := 0; b.Loop(); i++ {
			rec := newRecord(keys[i%len(keys)] + strconv.Itoa(i/len(keys)))
			if old, err := s.Acquire(ctx, rec, now); err != nil || old != nil {
				b.Fatal(old, err)
			}
			complete(b, s, rec)
		}
	})
	b.Run("replay", func(b *testing.B) {
		s := NewStore()
		for _, k := range keys {
			rec := newRecord(k)
			s.Acquire(ctx, rec, now)
			complete(b, s, rec)
		}
		for i := 0; b.Loop(); i++ {
			if old, err := s.Acquire(ctx, newRecord(keys[i%len(keys)]), now); err != nil || old == nil {
				b.Fatal(old, err)
			}
		}
	})
}

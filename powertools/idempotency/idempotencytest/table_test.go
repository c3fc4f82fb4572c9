package idempotencytest

import (
	"fmt"
	"hash/maphash"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// collidingStore returns a Store whose keys all hash alike, so that every
// key but the first goes through the table's overflow.
func collidingStore(*testing.T) idempotency.Store {
	s := NewStore()
	s.records.hash = func(maphash.Seed, string) uint64 { return 7 }
	return s
}

// The store keeps its contract when keys collide in the table's index.
func TestStoreWithCollidingKeys(t *testing.T) {
	TestStore(t, collidingStore)
	shared := collidingStore(t)
	TestStore(t, func(*testing.T) idempotency.Store { return shared })
}

// Deleting the key that holds a hash in the index hands the hash to a key
// that collided with it.
func TestTableDeleteHandsOverCollidingKey(t *testing.T) {
	var tb table
	tb.hash = func(maphash.Seed, string) uint64 { return 1 }
	for _, k := range []string{"a", "b", "c"} {
		tb.put(&idempotency.Record{Key: k, Status: idempotency.StatusComplete, LeaseToken: k})
	}
	tb.delete("a")
	tb.delete("b")
	for k, want := range map[string]bool{"a": false, "b": false, "c": true} {
		if p, ok := tb.get(k); ok != want || ok && string(p.leaseToken()) != k {
			t.Errorf("get(%q): found %v, want %v", k, ok, want)
		}
	}
	tb.put(&idempotency.Record{Key: "a", Status: idempotency.StatusComplete, LeaseToken: "a2"})
	if p, ok := tb.get("a"); !ok || string(p.leaseToken()) != "a2" {
		t.Errorf("get(a) after a new put: found %v", ok)
	}
}

// Records rewritten again and again, as a store under load rewrites them,
// keep the table's arena bounded, and every record readable.
func TestTableCompacts(t *testing.T) {
	var tb table
	now := time.Unix(1700000000, 0)
	for round := range 200 {
		for k := range 100 {
			tb.put(&idempotency.Record{
				Key: fmt.Sprint("key-", k), Status: idempotency.StatusComplete, Expiry: now,
				LeaseToken: fmt.Sprint("token-", round), Response: make([]byte, round%50+1),
			})
		}
	}
	if len(tb.arena) > 1<<20 {
		t.Errorf("arena holds %d bytes for 100 small records", len(tb.arena))
	}
	for k := range 100 {
		p, ok := tb.get(fmt.Sprint("key-", k))
		if !ok || string(p.leaseToken()) != "token-199" {
			t.Fatalf("key-%d: found %v, or not the last token", k, ok)
		}
		if r := p.record("k"); len(r.Response) != 199%50+1 || !r.Expiry.Equal(now) {
			t.Fatalf("key-%d: record %+v", k, r)
		}
	}
}

package idempotencytest

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
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
	if tb.arenaBytes() > 1<<20 {
		t.Errorf("arena holds %d bytes for 100 small records", tb.arenaBytes())
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

// liveBytes is what the table's live entries take, their room to grow
// included.
func liveBytes(tb *table) int {
	n := 0
	for i := range tb.nslots {
		if s := tb.slot(i); s.used {
			n += s.extent()
		}
	}
	return n
}

// A new key's larger COMPLETE record takes the place of its IN_PROGRESS
// one when that was the last entry written, so the usual first call leaves
// nothing dead behind.
func TestTableNewKeysLeaveNoGarbage(t *testing.T) {
	var tb table
	now := time.Unix(1700000000, 0)
	for k := range 20000 {
		key := fmt.Sprint("orders#", k)
		tb.put(&idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: now, LeaseEnd: now, LeaseToken: "t"})
		tb.put(&idempotency.Record{Key: key, Status: idempotency.StatusComplete, Expiry: now, LeaseToken: "t", Response: []byte(`{"statusCode":201}`)})
	}
	if live, held := liveBytes(&tb), tb.arenaBytes(); held > live+chunkSize {
		t.Errorf("arena holds %d bytes for %d live", held, live)
	}
	// Only an IN_PROGRESS record that ended a chunk, with no room after
	// it, is left dead: one per chunk at most.
	for _, ch := range tb.chunks {
		if ch.dead > 100 {
			t.Fatalf("a chunk has %d dead bytes", ch.dead)
		}
	}
}

// The table against a map, under random puts of every size (big entries
// included), rewrites and deletes: every record reads back as last put,
// and the arena stays within twice the live bytes plus a few chunks.
func TestTableMatchesMap(t *testing.T) {
	for seed := range int64(5) {
		rng := rand.New(rand.NewPCG(uint64(seed), 0))
		var tb table
		model := map[string]*idempotency.Record{}
		for step := range 30000 {
			key := fmt.Sprint("k", rng.IntN(500))
			switch op := rng.IntN(10); {
			case op == 0:
				tb.delete(key)
				delete(model, key)
			default:
				size := rng.IntN(300)
				if rng.IntN(50) == 0 {
					size = bigEntry + rng.IntN(bigEntry)
				}
				rec := &idempotency.Record{
					Key: key, Status: idempotency.StatusComplete, LeaseToken: fmt.Sprint(step),
					Response: bytes.Repeat([]byte{byte(step)}, size),
				}
				tb.put(rec)
				model[key] = rec
			}
			if step%1000 != 999 {
				continue
			}
			if tb.len() != len(model) {
				t.Fatalf("seed %d step %d: %d records, want %d", seed, step, tb.len(), len(model))
			}
			for key, want := range model {
				p, ok := tb.get(key)
				if !ok {
					t.Fatalf("seed %d step %d: %q missing", seed, step, key)
				}
				if got := p.record(key); got.LeaseToken != want.LeaseToken || !bytes.Equal(got.Response, want.Response) {
					t.Fatalf("seed %d step %d: %q reads back token %q, want %q", seed, step, key, got.LeaseToken, want.LeaseToken)
				}
			}
			if live, held := liveBytes(&tb), tb.arenaBytes(); held > 2*live+(maxSpare+2)*chunkSize {
				t.Fatalf("seed %d step %d: arena holds %d bytes for %d live", seed, step, held, live)
			}
		}
	}
}

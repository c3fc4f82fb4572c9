package idempotency

import (
	"encoding/hex"
	"sync"
	"testing"
	"time"
)

func TestLeaseTokenFormat(t *testing.T) {
	tok := newLeaseToken(time.Now())
	if b, err := hex.DecodeString(tok); err != nil || len(b) != 16 || hex.EncodeToString(b) != tok {
		t.Errorf("token %q: want 32 lowercase hex digits", tok)
	}
}

// TestLeaseTokensUnique takes tokens from concurrent invocations that all
// read the same time, as they do with a fixed clock: the counter alone must
// keep them apart.
func TestLeaseTokensUnique(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const workers, each = 8, 1000
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range got {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], newLeaseToken(now))
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for _, toks := range got {
		for _, tok := range toks {
			if seen[tok] {
				t.Fatalf("token %s made twice", tok)
			}
			seen[tok] = true
		}
	}
}

// TestLeaseTokenSourcesDiffer stands for two processes: each draws its own
// random half and counter start.
func TestLeaseTokenSourcesDiffer(t *testing.T) {
	a, b := newTokenSource(), newTokenSource()
	if a.random == b.random || a.next.Load() == b.next.Load() {
		t.Errorf("two sources drew the same random values: %x/%x and %x/%x", a.random, a.next.Load(), b.random, b.next.Load())
	}
}

// TestLeaseTokenFoldsInTheTime checks the defence against cloned
// processes: the same counter value at another time gives another token.
func TestLeaseTokenFoldsInTheTime(t *testing.T) {
	s := newTokenSource()
	now := time.Now()
	var first, again [tokenLen]byte
	s.put(first[:], now)
	s.next.Add(^uint64(0)) // step the counter back: the same value again
	if s.put(again[:], now.Add(time.Nanosecond)); again == first {
		t.Errorf("token %s repeated for another time", first)
	}
}

package idempotency

import (
	"encoding/hex"
	"sync"
	"testing"
)

func TestLeaseTokenFormat(t *testing.T) {
	t.Parallel()
	tok := newLeaseToken()
	if b, err := hex.DecodeString(tok); err != nil || len(b) != 16 || hex.EncodeToString(b) != tok {
		t.Errorf("token %q: want 32 lowercase hex digits", tok)
	}
}

// TestLeaseTokensUnique takes tokens from concurrent invocations.
func TestLeaseTokensUnique(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 1000
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range got {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], newLeaseToken())
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

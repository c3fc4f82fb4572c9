package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestStoredResponseNotJSON checks that a Handler does not replay a
// stored response that cannot be JSON, which no version of this library
// writes (only its first byte is looked at): a responsestore envelope met by a store without responsestore
// (two versions in a rolling deploy) is refused as corrupted, not handed
// to the caller as a success.
func TestStoredResponseNotJSON(t *testing.T) {
	t.Parallel()
	const event = `{"order_id":"o-1"}`
	envelope := append([]byte{0x89, 'I', 'D', 'R', 1, 0}, "\x13\x37ciphertext"...)
	tests := []struct {
		name     string
		response []byte
		want     string // "" for a replay of response
	}{
		{name: "JSON object", response: []byte(`{"status":"charged"}`)},
		{name: "JSON string", response: []byte(`"charged"`)},
		{name: "an encrypted envelope", response: envelope, want: "corrupted"},
		{name: "text that is not JSON", response: []byte(`charged`), want: "corrupted"},
		{name: "nothing", response: []byte{}, want: "corrupted"},
	}
	for _, tt := range tests {
		for _, cache := range []int{0, 8} {
			t.Run(tt.name, func(t *testing.T) {
				store := idempotencytest.NewStore()
				ran := 0
				h, err := idempotency.New(store, func(context.Context, map[string]any) (string, error) {
					ran++
					return "ran", nil
				}, idempotency.WithEventKey("order_id"), idempotency.WithKeyPrefix("p"), idempotency.WithLocalCache(cache))
				if err != nil {
					t.Fatal(err)
				}
				key, _, err := h.KeyOf([]byte(event))
				if err != nil {
					t.Fatal(err)
				}
				now := time.Now()
				store.Put(&idempotency.Record{Key: key, Status: idempotency.StatusComplete, Expiry: now.Add(time.Hour),
					LeaseToken: "earlier", Response: tt.response, CompletedAt: now})
				for range 2 { // the second from the local cache, when there is one
					got, err := h.Invoke(context.Background(), []byte(event))
					if ran != 0 {
						t.Fatalf("the handler ran")
					}
					if tt.want == "" {
						if err != nil || string(got) != string(tt.response) {
							t.Fatalf("got %q, %v; want the stored response", got, err)
						}
						continue
					}
					if _, ok := errors.AsType[*idempotency.CorruptedRecordError](err); !ok || got != nil {
						t.Fatalf("got %q, %v; want a *CorruptedRecordError", got, err)
					}
				}
			})
		}
	}
}

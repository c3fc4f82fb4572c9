package itemsize

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The sizes are counted by hand from the item the DynamoDB store writes,
// with its default attribute names.
func TestItemSize(t *testing.T) {
	expiry := time.Unix(1700003600, 0)        // 10 digits
	leaseEnd := time.UnixMilli(1700000030000) // 13 digits
	tests := []struct {
		name string
		rec  idempotency.Record
		want int
	}{
		{"KeyAndStatus", idempotency.Record{Key: "k", Status: idempotency.StatusComplete},
			len("id") + 1 + len("status") + 9},
		{"InProgress", idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, Expiry: expiry, LeaseEnd: leaseEnd, LeaseToken: "tok", PayloadHash: "abcd"},
			len("id") + 1 + len("status") + 10 + len("expiration") + 10 + 1 + len("in_progress_expiration") + 13 + 1 + len("lease_token") + 3 + len("validation") + 4},
		{"Complete", idempotency.Record{Key: "k", Status: idempotency.StatusComplete, Expiry: expiry, LeaseToken: "tok", Response: []byte(`{"n":1}`)},
			len("id") + 1 + len("status") + 9 + len("expiration") + 10 + 1 + len("lease_token") + 3 + len("data") + 7},
		{"BinaryResponse", idempotency.Record{Key: "k", Status: idempotency.StatusComplete, Response: []byte{0xff, 0x00}},
			len("id") + 1 + len("status") + 9 + len("data") + 2},
		// An empty response is no data attribute.
		{"ResponseOmitted", idempotency.Record{Key: "k", Status: idempotency.StatusComplete, Response: []byte{}, ResponseOmitted: true},
			len("id") + 1 + len("status") + 9 + len("response_omitted") + 1},
		{"NegativeTime", idempotency.Record{Key: "k", Status: idempotency.StatusComplete, Expiry: time.Unix(-5, 0)},
			len("id") + 1 + len("status") + 9 + len("expiration") + 2 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Record(&tt.rec); got != tt.want {
				t.Errorf("Record = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestInt(t *testing.T) {
	for _, n := range []int64{0, 1, 9, 10, -1, -9, -10, 99, 100, 1700000000, -1700000000123, math.MaxInt64, math.MinInt64} {
		if got, want := Int(n), Number(strconv.FormatInt(n, 10)); got != want {
			t.Errorf("Int(%d) = %d, want %d", n, got, want)
		}
	}
}

package idempotencytest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// A packed record comes back as the Record it was made from, with the
// times at DynamoDB's precision and an empty response as none.
func TestPackedRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 12, 19, 3, 58, 123456789, time.FixedZone("x", 3600))
	tests := []struct {
		name string
		in   idempotency.Record
		want idempotency.Record
	}{
		{"in progress", idempotency.Record{Key: "p#1", Status: idempotency.StatusInProgress, Expiry: at, LeaseEnd: at, LeaseToken: "tok"},
			idempotency.Record{Key: "p#1", Status: idempotency.StatusInProgress, Expiry: at.Truncate(time.Second).UTC(), LeaseEnd: at.Truncate(time.Millisecond).UTC(), LeaseToken: "tok"}},
		{"complete", idempotency.Record{Key: "p#2", Status: idempotency.StatusComplete, Expiry: at, LeaseToken: "tok", Response: []byte(`{"a":1}`), PayloadHash: "h"},
			idempotency.Record{Key: "p#2", Status: idempotency.StatusComplete, Expiry: at.Truncate(time.Second).UTC(), LeaseToken: "tok", Response: []byte(`{"a":1}`), PayloadHash: "h"}},
		{"omitted, empty response", idempotency.Record{Key: "p#3", Status: idempotency.StatusComplete, ResponseOmitted: true, Response: []byte{}},
			idempotency.Record{Key: "p#3", Status: idempotency.StatusComplete, ResponseOmitted: true}},
		{"unknown status, before 1970", idempotency.Record{Key: "p#4", Status: "WEIRD", Expiry: time.Unix(-5, 0), LeaseEnd: time.UnixMilli(-7)},
			idempotency.Record{Key: "p#4", Status: "WEIRD", Expiry: time.Unix(-5, 0).UTC(), LeaseEnd: time.UnixMilli(-7).UTC()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := packed(appendPacked([]byte("ignored prefix")[:0], &tt.in))
			if len(p) != packedSize(&tt.in) {
				t.Errorf("packed %d bytes, packedSize says %d", len(p), packedSize(&tt.in))
			}
			if diff := cmp.Diff(&tt.want, p.record(tt.in.Key)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

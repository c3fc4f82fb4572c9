package idempotencytest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

func TestMaxItemSize(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	held := &idempotency.Record{
		Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "a",
		Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute),
	}
	// The COMPLETE record is overhead bytes and its response: "id" and
	// "k", "status" and "COMPLETED", "expiration" and 10 digits plus one,
	// "lease_token" and "a", "data".
	const overhead = 2 + 1 + 6 + 9 + 10 + 11 + 11 + 1 + 4
	tests := []struct {
		name     string
		limit    int
		setLimit bool
		response int
		tooLarge bool
	}{
		{"DefaultAtLimit", 0, false, DefaultMaxItemSize - overhead, false},
		{"DefaultOverLimit", 0, false, DefaultMaxItemSize - overhead + 1, true},
		{"SetAtLimit", 100, true, 100 - overhead, false},
		{"SetOverLimit", 100, true, 100 - overhead + 1, true},
		{"SetAboveDefault", 1 << 20, true, DefaultMaxItemSize, false},
		{"ZeroIsNoLimit", 0, true, 1 << 20, false},
		{"NegativeIsNoLimit", -1, true, 1 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Store // the zero Store has the default limit
			if tt.setLimit {
				s.SetMaxItemSize(tt.limit)
			}
			if old, err := s.Acquire(t.Context(), held, now); old != nil || err != nil {
				t.Fatalf("Acquire = %+v, %v", old, err)
			}
			done := *held
			done.Status, done.LeaseEnd = idempotency.StatusComplete, time.Time{}
			done.Response = bytes.Repeat([]byte("x"), tt.response)
			if size := itemSize(&done); size != overhead+tt.response {
				t.Fatalf("itemSize = %d, want %d: the overhead above is stale", size, overhead+tt.response)
			}
			err := s.Complete(t.Context(), &done)
			want := &done
			if tt.tooLarge {
				if !errors.Is(err, idempotency.ErrRecordTooLarge) {
					t.Fatalf("Complete error = %v, want ErrRecordTooLarge", err)
				}
				if got := s.Counts().Complete; got != 0 {
					t.Errorf("Counts().Complete = %d, want 0: DynamoDB is sent no request", got)
				}
				want = held
			} else if err != nil {
				t.Fatalf("Complete error = %v, want nil", err)
			}
			got, err := s.Get(t.Context(), "k")
			if err != nil {
				t.Fatal(err)
			}
			wantRecord(t, "Get", got, want)

			// The middleware's retry, without the response, fits.
			done.Response, done.ResponseOmitted = nil, true
			if err := s.Complete(t.Context(), &done); err != nil {
				t.Errorf("Complete without the response: %v", err)
			}
		})
	}
}

// Acquire and Reclaim write records too, and are held to the limit as the
// DynamoDB store holds them.
func TestMaxItemSizeAcquireReclaim(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	var s Store
	s.SetMaxItemSize(200)
	rec := &idempotency.Record{
		Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "a",
		Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute),
		PayloadHash: strings.Repeat("h", 200),
	}
	if _, err := s.Acquire(t.Context(), rec, now); !errors.Is(err, idempotency.ErrRecordTooLarge) {
		t.Fatalf("Acquire error = %v, want ErrRecordTooLarge", err)
	}
	if _, err := s.Get(t.Context(), "k"); !errors.Is(err, idempotency.ErrRecordNotFound) {
		t.Fatalf("Get after a refused Acquire: %v, want ErrRecordNotFound", err)
	}

	rec.PayloadHash = ""
	if _, err := s.Acquire(t.Context(), rec, now); err != nil {
		t.Fatal(err)
	}
	held := *rec
	held.Status, held.LeaseEnd = idempotency.StatusUncertain, time.Time{}
	if err := s.Complete(t.Context(), &held); err != nil {
		t.Fatal(err)
	}
	next := *rec
	next.LeaseToken, next.PayloadHash = "b", strings.Repeat("h", 200)
	if err := s.Reclaim(t.Context(), &next, "a"); !errors.Is(err, idempotency.ErrRecordTooLarge) {
		t.Fatalf("Reclaim error = %v, want ErrRecordTooLarge", err)
	}
	got, err := s.Get(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	wantRecord(t, "Get after a refused Reclaim", got, &held)
}

// The sizes are counted by hand from the item the DynamoDB store writes,
// with its default attribute names.
func TestItemSize(t *testing.T) {
	t.Parallel()
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
			if got := itemSize(&tt.rec); got != tt.want {
				t.Errorf("itemSize = %d, want %d", got, tt.want)
			}
		})
	}
}

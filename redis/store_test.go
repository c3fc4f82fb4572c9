package redis

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/redis/go-redis/v9"
)

// TestConformance runs the conformance suite, its UNCERTAIN cases
// included, on every server: the in-memory and DynamoDB stores pass the
// same one.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			store := newStore(t, srv.client(t))
			idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return store })
		})
	}
}

// TestCorruptedFailsClosed: a record the store cannot read is never
// written over, and the middleware does not run the handler on its key.
func TestCorruptedFailsClosed(t *testing.T) {
	t.Parallel()
	now := time.Now()
	future := strconv.FormatInt(now.Add(time.Hour).Unix(), 10)
	past := strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)
	pastMs := strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)
	tests := []struct {
		name string
		seed []any // HSET fields; nil: a string value
		// takenOver: the record is not live at now whatever its other
		// fields say, and Acquire writes over it, as the other stores do.
		takenOver bool
	}{
		{"unknown status", []any{"status", "DONE", "expiration", future}, false},
		{"no status", []any{"expiration", future, "data", "{}"}, false},
		{"unreadable expiry", []any{"status", "COMPLETED", "expiration", "tomorrow"}, false},
		{"unreadable expiry with a passed lease", []any{"status", "INPROGRESS", "expiration", "+1", "in_progress_expiration", pastMs}, false},
		{"unreadable lease end", []any{"status", "INPROGRESS", "expiration", future, "in_progress_expiration", "1e99"}, false},
		{"unreadable response_omitted", []any{"status", "COMPLETED", "expiration", future, "response_omitted", "yes"}, false},
		{"a string, as Powertools Python writes", nil, false},
		{"unknown status, expired", []any{"status", "DONE", "expiration", past}, true},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			s := newStore(t, c)
			ctx := t.Context()
			for i, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					key := fmt.Sprintf("corrupted-%d", i)
					redisKey := s.opts.KeyPrefix + key
					seed := func(redisKey string) {
						if tt.seed == nil {
							c.Set(ctx, redisKey, `{"status":"COMPLETED","expiration":1}`, 0)
						} else {
							c.HSet(ctx, redisKey, tt.seed...)
						}
					}
					seed(redisKey)
					before := dump(t, c, redisKey)
					rec := &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute), LeaseToken: "t"}
					existing, err := s.Acquire(ctx, rec, now)
					if tt.takenOver {
						if err != nil || existing != nil {
							t.Fatalf("Acquire = %+v, %v; want the expired record taken over", existing, err)
						}
						return
					}
					if !isCorrupted(err) {
						t.Fatalf("Acquire = %+v, %v; want a *CorruptedRecordError", existing, err)
					}
					if _, err := s.Get(ctx, key); !isCorrupted(err) {
						t.Errorf("Get error = %v, want a *CorruptedRecordError", err)
					}
					// The token conditions refuse it: it is not the caller's.
					done := *rec
					done.Status = idempotency.StatusComplete
					if err := s.Complete(ctx, &done); !isCorrupted(err) && !errors.Is(err, idempotency.ErrLeaseLost) {
						t.Errorf("Complete error = %v, want refused", err)
					}
					if err := s.Release(ctx, key, "t"); !isCorrupted(err) && !errors.Is(err, idempotency.ErrLeaseLost) {
						t.Errorf("Release error = %v, want refused", err)
					}
					if err := s.Reclaim(ctx, &done, "t"); !isCorrupted(err) && !errors.Is(err, idempotency.ErrLeaseLost) {
						t.Errorf("Reclaim error = %v, want refused", err)
					}
					if after := dump(t, c, redisKey); after != before {
						t.Errorf("the key changed from %s to %s", before, after)
					}
					runs := 0
					h := idempotency.Wrap(s, func(context.Context, map[string]any) (string, error) { runs++; return "ran", nil },
						idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("p"), quiet)
					seed(s.opts.KeyPrefix + middlewareKey("p", `"`+key+`"`))
					if _, err := h.Invoke(ctx, []byte(`{"id":"`+key+`"}`)); !isCorrupted(err) || runs != 0 {
						t.Errorf("middleware: err = %v, handler runs %d; want a *CorruptedRecordError and no run", err, runs)
					}
				})
			}
		})
	}
}

// quiet keeps the middleware's expected warnings out of the test output.
var quiet = idempotency.WithLogger(slog.New(slog.DiscardHandler))

// dump describes the key's type and value, for before-and-after checks.
func dump(t *testing.T, c redis.UniversalClient, key string) string {
	t.Helper()
	ctx := t.Context()
	typ := c.Type(ctx, key).Val()
	switch typ {
	case "hash":
		return fmt.Sprint(typ, c.HGetAll(ctx, key).Val())
	case "string":
		return fmt.Sprint(typ, c.Get(ctx, key).Val())
	}
	return typ
}

// middlewareKey is the idempotency key the middleware makes with prefix
// for an event whose key expression selects the JSON value selected:
// the prefix, "#", and the SHA-256 of the value's canonical JSON.
func middlewareKey(prefix, selected string) string {
	sum := sha256.Sum256([]byte(selected))
	return prefix + "#" + hex.EncodeToString(sum[:])
}

// TestRecordTooLarge: a record over MaxRecordSize is refused before any
// command and nothing is stored; through the middleware, the response is
// left out and a duplicate gets a *ResponseNotStoredError with the reason
// the record keeps.
func TestRecordTooLarge(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			s := newStore(t, srv.client(t), func(o *Options) { o.MaxRecordSize = 1024 })
			ctx := t.Context()
			now := time.Now()
			rec := &idempotency.Record{Key: "big", Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute), LeaseToken: "t"}
			if existing, err := s.Acquire(ctx, rec, now); err != nil || existing != nil {
				t.Fatalf("Acquire = %+v, %v", existing, err)
			}
			done := *rec
			done.Status, done.LeaseEnd, done.Response = idempotency.StatusComplete, time.Time{}, bytes.Repeat([]byte("x"), 1024)
			if err := s.Complete(ctx, &done); !errors.Is(err, idempotency.ErrRecordTooLarge) {
				t.Fatalf("Complete error = %v, want ErrRecordTooLarge", err)
			}
			if got, err := s.Get(ctx, "big"); err != nil || got.Status != idempotency.StatusInProgress {
				t.Fatalf("after the refused Complete: %+v, %v; want the IN_PROGRESS record", got, err)
			}
			big := *rec
			big.Key, big.PayloadHash = "big-acquire", string(bytes.Repeat([]byte("h"), 1024))
			if _, err := s.Acquire(ctx, &big, now); !errors.Is(err, idempotency.ErrRecordTooLarge) {
				t.Fatalf("Acquire of a large record: %v, want ErrRecordTooLarge", err)
			}
			if _, err := s.Get(ctx, "big-acquire"); !errors.Is(err, idempotency.ErrRecordNotFound) {
				t.Fatalf("Get after the refused Acquire: %v, want ErrRecordNotFound", err)
			}

			runs := 0
			h := idempotency.Wrap(s, func(context.Context, map[string]any) (string, error) {
				runs++
				return strings.Repeat("r", 2048), nil
			}, idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("p"), quiet)
			if out, err := h.Invoke(ctx, []byte(`{"id":1}`)); err != nil || len(out) < 2048 {
				t.Fatalf("first call: %d bytes, %v; want the response", len(out), err)
			}
			if _, err := h.Invoke(ctx, []byte(`{"id":1}`)); err == nil {
				t.Fatal("duplicate: no error, want a *ResponseNotStoredError")
			} else if e, ok := errors.AsType[*idempotency.ResponseNotStoredError](err); !ok || e.Reason != idempotency.ReasonTooLarge {
				t.Fatalf("duplicate: %v, want a *ResponseNotStoredError saying the record was too large, as the server keeps it", err)
			}
			if runs != 1 {
				t.Errorf("handler ran %d times, want 1", runs)
			}
		})
	}
}

// TestLayout: the hash and the TTL as the package documentation describes
// them.
func TestLayout(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			s := newStore(t, c)
			ctx := t.Context()
			// Any now: the TTL is counted from it, not from the server's
			// clock.
			now := time.Now().Add(-24 * time.Hour).Truncate(time.Second)
			rec := &idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour),
				LeaseEnd: now.Add(1500 * time.Millisecond), Deadline: now.Add(time.Second), LeaseToken: "tok", PayloadHash: "h"}
			if _, err := s.Acquire(ctx, rec, now); err != nil {
				t.Fatal(err)
			}
			key := s.opts.KeyPrefix + "k"
			want := map[string]string{
				"status":                 "INPROGRESS",
				"expiration":             strconv.FormatInt(now.Add(time.Hour).Unix(), 10),
				"in_progress_expiration": strconv.FormatInt(now.Add(1500*time.Millisecond).UnixMilli(), 10),
				"invocation_deadline":    strconv.FormatInt(now.Add(time.Second).UnixMilli(), 10),
				"lease_token":            "tok",
				"validation":             "h",
			}
			if got := c.HGetAll(ctx, key).Val(); !maps.Equal(got, want) {
				t.Errorf("hash = %v, want %v", got, want)
			}
			wantTTL(t, c, key, time.Hour+time.Minute)

			done := &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, Expiry: time.Now().Add(2 * time.Hour),
				LeaseToken: "tok", Response: []byte(`{"ok":true}`), CompletedAt: now.Add(1250 * time.Millisecond)}
			if err := s.Complete(ctx, done); err != nil {
				t.Fatal(err)
			}
			want = map[string]string{
				"status":       "COMPLETED",
				"expiration":   strconv.FormatInt(done.Expiry.Unix(), 10),
				"lease_token":  "tok",
				"data":         `{"ok":true}`,
				"completed_at": strconv.FormatInt(now.Add(1250*time.Millisecond).UnixMilli(), 10),
			}
			if got := c.HGetAll(ctx, key).Val(); !maps.Equal(got, want) {
				t.Errorf("completed hash = %v, want %v", got, want)
			}
			wantTTL(t, c, key, 2*time.Hour+time.Minute)

			forever := &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: "tok"}
			if err := s.Complete(ctx, forever); err != nil {
				t.Fatal(err)
			}
			if ttl := c.PTTL(ctx, key).Val(); ttl != -1 {
				t.Errorf("TTL of a record with no expiry = %v, want none (-1)", ttl)
			}
		})
	}
}

// wantTTL fails unless the key's TTL is want, less at most the time the
// test has taken since (a minute, a bound no loaded machine reaches).
func wantTTL(t *testing.T, c redis.UniversalClient, key string, want time.Duration) {
	t.Helper()
	got := c.PTTL(t.Context(), key).Val()
	if got > want || got < want-time.Minute {
		t.Errorf("TTL of %s = %v, want %v (less the test's time)", key, got, want)
	}
}

package responsestore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// configs are the option sets every behaviour is checked under, over the
// in-memory store with the fakes; the server tests run them on moto.
func configs(s3 *memS3, k *memKMS) []struct {
	name string
	opts []responsestore.Option
} {
	aead := newGCM(randomKey())
	return []struct {
		name string
		opts []responsestore.Option
	}{
		{"none", nil},
		{"gzip", []responsestore.Option{responsestore.WithCompression(0)}},
		{"aead", []responsestore.Option{responsestore.WithAEAD(aead), responsestore.WithFunctionName("fn")}},
		{"kms", []responsestore.Option{responsestore.WithKMS(k, "key-1"), responsestore.WithFunctionName("fn")}},
		{"s3-always", []responsestore.Option{responsestore.WithS3(s3, "bucket"), responsestore.WithOffloadThreshold(0)}},
		{"all", []responsestore.Option{
			responsestore.WithCompression(0),
			responsestore.WithKMS(k, "key-1"), responsestore.WithFunctionName("fn"),
			responsestore.WithS3(s3, "bucket"), responsestore.WithOffloadThreshold(0),
		}},
	}
}

func mustNew(t testing.TB, inner idempotency.Store, opts ...responsestore.Option) idempotency.Store {
	t.Helper()
	s, err := responsestore.New(inner, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The conformance suite, UNCERTAIN cases included, over the wrapped
// in-memory store, under every configuration.
func TestConformanceMemory(t *testing.T) {
	t.Parallel()
	for _, c := range configs(newMemS3(), newMemKMS("key-1")) {
		t.Run(c.name, func(t *testing.T) {
			idempotencytest.TestStore(t, func(t *testing.T) idempotency.Store {
				return mustNew(t, idempotencytest.NewStore(), c.opts...)
			})
		})
	}
}

// completeOne acquires and completes key with resp in s at now.
func completeOne(t testing.TB, s idempotency.Store, key string, resp []byte) *idempotency.Record {
	t.Helper()
	now := time.Now()
	rec := &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute), LeaseToken: "0123456789abcdef0123456789abcdef"}
	if existing, err := s.Acquire(context.Background(), rec, now); err != nil || existing != nil {
		t.Fatalf("Acquire = %+v, %v", existing, err)
	}
	rec.Status, rec.Response, rec.LeaseEnd, rec.CompletedAt = idempotency.StatusComplete, resp, time.Time{}, now
	given := *rec
	if err := s.Complete(context.Background(), rec); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if !bytes.Equal(rec.Response, given.Response) || rec.Status != given.Status {
		t.Fatal("Complete changed the record it was given")
	}
	return rec
}

// stored returns the response as the inner store keeps it.
func stored(t testing.TB, inner *idempotencytest.Store, key string) []byte {
	t.Helper()
	rec, err := inner.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Response
}

// replayed returns the response that Get on s reads back.
func replayed(t testing.TB, s idempotency.Store, key string) []byte {
	t.Helper()
	rec, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	return rec.Response
}

// jsonOf returns a JSON response of about n bytes: compressible, as JSON
// is, unless random.
func jsonOf(n int, random bool) []byte {
	type item struct {
		ID    int    `json:"id"`
		Label string `json:"label"`
	}
	var items []item
	size := 2
	for i := 0; size < n; i++ {
		label := "line item description, the same each time"
		if random {
			b := make([]byte, 30)
			rand.Read(b)
			label = base64.StdEncoding.EncodeToString(b)
		}
		items = append(items, item{ID: i, Label: label})
		size += 25 + len(label)
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return b
}

// What the inner store keeps, and what comes back, for responses of
// several kinds under each option.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	responses := map[string][]byte{
		"small-json":   []byte(`{"ok":true}`),
		"large-json":   jsonOf(500_000, false),
		"large-random": jsonOf(500_000, true),
		"binary":       {0xff, 0x00, 0xfe},
		"magic":        append([]byte{0x89, 'I', 'D', 'R', 1, 0}, "looks like an envelope"...),
		"magic-only":   {0x89, 'I', 'D', 'R'},
	}
	for _, c := range configs(newMemS3(), newMemKMS("key-1")) {
		for name, resp := range responses {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				inner := idempotencytest.NewStore()
				inner.SetMaxItemSize(-1)
				s := mustNew(t, inner, c.opts...)
				completeOne(t, s, "k", resp)
				if got := replayed(t, s, "k"); !bytes.Equal(got, resp) {
					t.Fatalf("replayed %d bytes, want the %d stored", len(got), len(resp))
				}
				keep := stored(t, inner, "k")
				if c.name == "none" && !strings.HasPrefix(name, "magic") && !bytes.Equal(keep, resp) {
					t.Errorf("with no option the inner store keeps %q, want the response as it is", keep)
				}
				if strings.HasPrefix(name, "magic") && bytes.Equal(keep, resp) {
					t.Errorf("a response that starts with the magic is kept as it is; want it in an envelope")
				}
				encrypted := c.name == "aead" || c.name == "kms" || c.name == "all"
				for _, clear := range []string{`"ok":true`, "line item description"} {
					if encrypted && bytes.Contains(keep, []byte(clear)) {
						t.Errorf("encrypted, the inner store keeps %q in the clear", clear)
					}
				}
			})
		}
	}
}

// Records written before the store was used, plain responses, stay
// readable under every option.
func TestReadsRecordsWrittenBefore(t *testing.T) {
	t.Parallel()
	for _, c := range configs(newMemS3(), newMemKMS("key-1")) {
		t.Run(c.name, func(t *testing.T) {
			inner := idempotencytest.NewStore()
			completeOne(t, inner, "old", []byte(`{"written":"before"}`))
			if got := replayed(t, mustNew(t, inner, c.opts...), "old"); string(got) != `{"written":"before"}` {
				t.Fatalf("got %q", got)
			}
		})
	}
}

func TestCompressionKeptOnlyWhenSmaller(t *testing.T) {
	t.Parallel()
	inner := idempotencytest.NewStore()
	s := mustNew(t, inner, responsestore.WithCompression(100))
	short := []byte(`{"id":1}`)
	completeOne(t, s, "short", short)
	if !bytes.Equal(stored(t, inner, "short"), short) {
		t.Error("a response under the threshold was changed")
	}
	random := make([]byte, 4096)
	rand.Read(random)
	random[0] = '"'
	completeOne(t, s, "random", random)
	if !bytes.Equal(stored(t, inner, "random"), random) {
		t.Error("a response that gzip makes larger was changed")
	}
	large := jsonOf(100_000, false)
	completeOne(t, s, "large", large)
	if n := len(stored(t, inner, "large")); n > len(large)/5 {
		t.Errorf("a 100 KB JSON response is kept in %d bytes, want a fifth or less", n)
	}
	if !bytes.Equal(replayed(t, s, "large"), large) {
		t.Error("the gzipped response does not come back")
	}
}

// Offloading: over the threshold only, and, below it, when the inner store
// refuses the record as too large.
func TestOffload(t *testing.T) {
	t.Parallel()
	t.Run("threshold", func(t *testing.T) {
		s3 := newMemS3()
		inner := idempotencytest.NewStore()
		s := mustNew(t, inner, responsestore.WithS3(s3, "b"), responsestore.WithOffloadThreshold(1000))
		completeOne(t, s, "at", bytes.Repeat([]byte("a"), 1000))
		completeOne(t, s, "over", bytes.Repeat([]byte("a"), 1001))
		if puts, _ := s3.counts(); puts != 1 {
			t.Fatalf("%d objects written, want 1: the response over the threshold", puts)
		}
		name, _ := s3.only()
		if !strings.HasPrefix(name, "b/"+responsestore.DefaultObjectPrefix) {
			t.Errorf("object %q, want it under the default prefix", name)
		}
		if got := replayed(t, s, "over"); len(got) != 1001 {
			t.Errorf("replayed %d bytes", len(got))
		}
	})
	t.Run("inner-refuses", func(t *testing.T) {
		s3 := newMemS3()
		inner := idempotencytest.NewStore()
		inner.SetMaxItemSize(10_000)
		s := mustNew(t, inner, responsestore.WithS3(s3, "b"))
		resp := jsonOf(20_000, true)
		completeOne(t, s, "k", resp)
		if puts, _ := s3.counts(); puts != 1 {
			t.Fatalf("%d objects written, want 1", puts)
		}
		if !bytes.Equal(replayed(t, s, "k"), resp) {
			t.Error("the offloaded response does not come back")
		}
	})
	t.Run("default-threshold-fits-dynamodb", func(t *testing.T) {
		// Just under the default threshold the record still fits in a
		// DynamoDB item, with the in-memory store's DynamoDB limit.
		s3 := newMemS3()
		inner := idempotencytest.NewStore()
		s := mustNew(t, inner, responsestore.WithS3(s3, "b"), responsestore.WithAEAD(newGCM(randomKey())), responsestore.WithFunctionName("fn"))
		resp := bytes.Repeat([]byte("x"), responsestore.DefaultOffloadThreshold-28)
		completeOne(t, s, strings.Repeat("k", 2000), resp)
		if puts, _ := s3.counts(); puts != 0 {
			t.Fatalf("%d objects written, want none", puts)
		}
		completeOne(t, s, "over", append(resp, 'x'))
		if puts, _ := s3.counts(); puts != 1 {
			t.Fatalf("%d objects written, want 1", puts)
		}
	})
	t.Run("still-too-large", func(t *testing.T) {
		inner := idempotencytest.NewStore()
		inner.SetMaxItemSize(100)
		s := mustNew(t, inner, responsestore.WithS3(newMemS3(), "b"))
		now := time.Now()
		rec := &idempotency.Record{Key: strings.Repeat("k", 200), Status: idempotency.StatusComplete, LeaseToken: "t", Expiry: now.Add(time.Hour), Response: []byte(`"x"`)}
		if err := s.Complete(context.Background(), rec); !errors.Is(err, idempotency.ErrRecordTooLarge) {
			t.Fatalf("Complete of a record too large even offloaded = %v, want ErrRecordTooLarge", err)
		}
	})
}

// A retried COMPLETE write, whose body is encrypted anew, writes its own
// object: the object an earlier attempt's record points to is never
// replaced.
func TestRetriedCompleteKeepsEarlierObject(t *testing.T) {
	t.Parallel()
	s3 := newMemS3()
	inner := idempotencytest.NewStore()
	s := mustNew(t, inner, responsestore.WithS3(s3, "b"), responsestore.WithOffloadThreshold(0),
		responsestore.WithAEAD(newGCM(randomKey())), responsestore.WithFunctionName("fn"))
	rec := completeOne(t, s, "k", []byte(`{"n":1}`))
	first := stored(t, inner, "k")
	if err := s.Complete(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if keys := s3.keys(); len(keys) != 2 {
		t.Fatalf("objects %q, want two: one per attempt", keys)
	}
	// The first attempt's record still reads back.
	inner.Put(&idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: rec.LeaseToken, Expiry: rec.Expiry, Response: first})
	if got := replayed(t, s, "k"); string(got) != `{"n":1}` {
		t.Fatalf("got %q", got)
	}
}

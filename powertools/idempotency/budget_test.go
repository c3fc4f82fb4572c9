package idempotency_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The tests in this file hold an invocation's reading of its request to
// its decoding budget (jmespath.WithDecodeLimit): whatever a producer writes, what
// one Invoke allocates stays within budgetMultiple times the limit, plus
// budgetSlack for the invocation's own records and the handler's copy of
// a small event.

const (
	// defaultLimit is the limit a user gets without jmespath.WithDecodeLimit.
	defaultLimit = 16 << 20
	// budgetMultiple is the multiple of the limit that docs/security.md
	// and jmespath.WithDecodeLimit state.
	budgetMultiple = 3
	budgetSlack    = 256 << 10
)

// allocated returns the bytes that f allocates, and its result.
func allocated(f func() error) (uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// checkBudget fails t when n, the bytes one invocation allocated, is past
// budgetMultiple times limit.
func checkBudget(t *testing.T, n uint64, limit, event int) {
	t.Helper()
	bound := uint64(budgetMultiple*limit + budgetSlack + event)
	if n > bound {
		t.Errorf("the invocation allocated %.1f MiB, more than %d × the limit of %.2f MiB (and %d KiB)", float64(n)/(1<<20), budgetMultiple, float64(limit)/(1<<20), (budgetSlack+event)>>10)
	}
	t.Logf("allocated %.2f MiB for a limit of %.2f MiB (event %d KB)", float64(n)/(1<<20), float64(limit)/(1<<20), event>>10)
}

// emptyObjects returns gzip, in base64, of a JSON array of empty objects
// that is n bytes long at most: cheap to send, dear to decode into maps.
func emptyObjects(t *testing.T, n int) string {
	t.Helper()
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	count := (n - 1) / 3
	zw.Write([]byte("["))
	chunk := []byte(strings.Repeat("{},", 4096))
	for left := count; left > 0; {
		k := min(left, 4096)
		if k == left {
			zw.Write(chunk[:3*k-1]) // no comma after the last
		} else {
			zw.Write(chunk[:3*k])
		}
		left -= k
	}
	zw.Write([]byte("]"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(z.Bytes())
}

// kinesisEvent returns a Kinesis event of one record per data.
func kinesisEvent(data ...string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"Records":[`)
	for i, d := range data {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"eventID":"shardId-000000000000:%d","kinesis":{"partitionKey":"p","sequenceNumber":"%d","data":%q}}`, i, i, d)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// budgetHandler builds a handler of json.RawMessage keyed by key, that
// counts its runs.
func budgetHandler(t *testing.T, store idempotency.Store, runs *int, key string, opts ...idempotency.Option) *idempotency.Handler {
	t.Helper()
	h, err := idempotency.New(store, func(context.Context, json.RawMessage) (string, error) {
		*runs++
		return "ok", nil
	}, append([]idempotency.Option{idempotency.WithKeyPrefix("budget"), idempotency.WithEventKey(key), idempotency.WithKeyRequired(true)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// withLimit is the options of a test at limit: none for the default.
func withLimit(limit int) []idempotency.Option {
	if limit == defaultLimit {
		return nil
	}
	return []idempotency.Option{idempotency.WithJMESPath(jmespath.WithDecodeLimit(limit))}
}

// TestBudgetKinesisDocument sends, under the key that the docs show for
// Kinesis, a record whose data gunzips to a document made of empty
// objects: a 21 KB event at the default limit. Reading it must cost a
// multiple of the limit, not the ~50 bytes of maps and slices that each 3
// bytes of it would decode into. A document that leaves room in the
// budget for the decoder is read, and has no order_id: the key is
// missing; a document as long as the limit is refused.
func TestBudgetKinesisDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses up to 16 MiB")
	}
	const key = "powertools_json(powertools_base64_gzip(Records[0].kinesis.data)).order_id"
	for _, limit := range []int{defaultLimit, 1 << 20} {
		for _, size := range []int{limit - 128<<10, limit} {
			t.Run(fmt.Sprint(limit, "/", size), func(t *testing.T) {
				event := kinesisEvent(emptyObjects(t, size))
				store := idempotencytest.NewStore()
				runs := 0
				h := budgetHandler(t, store, &runs, key, withLimit(limit)...)
				n, err := allocated(func() error { _, err := h.Invoke(context.Background(), event); return err })
				_, missing := errors.AsType[*idempotency.MissingKeyError](err)
				tooLarge, over := errors.AsType[*jmespath.TooLargeError](err)
				switch {
				case size < limit && !missing:
					t.Errorf("Invoke: %v; want a *MissingKeyError", err)
				case size == limit && (!over || tooLarge.Limit != limit):
					t.Errorf("Invoke: %v; want an *InvalidEventError for a request past %d bytes", err, limit)
				}
				checkBudget(t, n, limit, len(event))
				if runs != 0 || store.Counts() != (idempotencytest.Counts{}) {
					t.Errorf("runs %d, store calls %+v; want none", runs, store.Counts())
				}
			})
		}
	}
}

// TestBudgetManyRecords keys on every record of a Kinesis event, each
// within the limit on its own: together they are past it, and the
// invocation is refused once the budget is spent, having allocated a
// multiple of the limit, not of the number of records.
func TestBudgetManyRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses up to 16 MiB")
	}
	const key = "Records[*].powertools_json(powertools_base64_gzip(kinesis.data)).order_id"
	for _, tc := range []struct {
		limit, records int
	}{
		{256 << 10, 64},
		{defaultLimit, 20},
	} {
		t.Run(fmt.Sprintf("%d×%d", tc.records, tc.limit), func(t *testing.T) {
			data := make([]string, tc.records)
			one := emptyObjects(t, tc.limit-16)
			for i := range data {
				data[i] = one
			}
			event := kinesisEvent(data...)
			store := idempotencytest.NewStore()
			runs := 0
			h := budgetHandler(t, store, &runs, key, withLimit(tc.limit)...)
			n, err := allocated(func() error { _, err := h.Invoke(context.Background(), event); return err })
			tooLarge, ok := errors.AsType[*jmespath.TooLargeError](err)
			if _, invalid := errors.AsType[*idempotency.InvalidEventError](err); !invalid || !ok || tooLarge.Limit != tc.limit {
				t.Errorf("Invoke: %v; want an *InvalidEventError for a request past %d bytes", err, tc.limit)
			}
			checkBudget(t, n, tc.limit, len(event))
			if runs != 0 || store.Counts() != (idempotencytest.Counts{}) {
				t.Errorf("runs %d, store calls %+v; want none", runs, store.Counts())
			}
		})
	}
}

// largeOrder is a 6 MB event, at the most Lambda takes in a synchronous
// invocation, whose order and customer sit beside a long array of empty
// objects.
func largeOrder() []byte {
	var b bytes.Buffer
	b.WriteString(`{"customer_id":"c-1","order_id":"o-1","items":[{}`)
	for b.Len() < 6<<20-16 {
		b.WriteString(`,{}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestBudgetMultiSelectLargeEvent keys a large event on a multi-select of
// two of its fields, a list and a hash: they decode what they name, and
// allocate no more than a key on one of the paths does.
func TestBudgetMultiSelectLargeEvent(t *testing.T) {
	event := largeOrder()
	type order struct {
		CustomerID string `json:"customer_id"`
		OrderID    string `json:"order_id"`
	}
	invoke := func(key string) (uint64, int) {
		store := idempotencytest.NewStore()
		runs := 0
		h, err := idempotency.New(store, func(_ context.Context, o order) (string, error) {
			runs++
			return o.OrderID, nil
		}, idempotency.WithKeyPrefix("budget"), idempotency.WithEventKey(key), idempotency.WithKeyRequired(true))
		if err != nil {
			t.Fatal(err)
		}
		n, err := allocated(func() error { _, err := h.Invoke(context.Background(), event); return err })
		if err != nil {
			t.Fatalf("%s: Invoke: %v", key, err)
		}
		return n, runs
	}
	path, _ := invoke("order_id")
	for _, key := range []string{"[customer_id, order_id]", "{c: customer_id, o: order_id}"} {
		t.Run(key, func(t *testing.T) {
			n, runs := invoke(key)
			if runs != 1 {
				t.Errorf("the handler ran %d times, want once", runs)
			}
			checkBudget(t, n, defaultLimit, 0)
			if n > path+64<<10 {
				t.Errorf("the multi-select allocated %.2f MiB, a key on one path %.2f MiB; want about the same", float64(n)/(1<<20), float64(path)/(1<<20))
			}
		})
	}
}

// TestBudgetWholeEvent keys 6 MB events on the whole event, the default
// key, in each format: text, which the key's hash reads whole, and
// empty objects, which cost more decoded than the budget holds and are
// refused once it is spent.
func TestBudgetWholeEvent(t *testing.T) {
	var text bytes.Buffer
	text.WriteString(`{"items":[`)
	for i := 0; text.Len() < 6<<20-8<<10; i++ {
		if i > 0 {
			text.WriteByte(',')
		}
		fmt.Fprintf(&text, `{"id":%d,"note":%q}`, i, strings.Repeat("é", 1000)) // ensure_ascii writes each as 6 bytes
	}
	text.WriteString(`]}`)
	objects := largeOrder()
	for _, compat := range []idempotency.Compatibility{idempotency.OwnFormat, idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript} {
		for _, tc := range []struct {
			name  string
			event []byte
			fits  bool
		}{{"text", text.Bytes(), true}, {"objects", objects, false}} {
			t.Run(fmt.Sprint(compat, "/", tc.name), func(t *testing.T) {
				store := idempotencytest.NewStore()
				runs := 0
				h, err := idempotency.New(store, func(context.Context, struct{}) (string, error) {
					runs++
					return "ok", nil
				}, idempotency.WithKeyPrefix("budget"), idempotency.WithCompatibility(compat), idempotency.WithPayloadValidation("@"))
				if err != nil {
					t.Fatal(err)
				}
				n, err := allocated(func() error { _, err := h.Invoke(context.Background(), tc.event); return err })
				_, over := errors.AsType[*jmespath.TooLargeError](err)
				if tc.fits && (err != nil || runs != 1) || !tc.fits && !over {
					t.Errorf("Invoke: %v, %d runs; want it to fit the budget: %v", err, runs, tc.fits)
				}
				checkBudget(t, n, defaultLimit, 0)
			})
		}
	}
}

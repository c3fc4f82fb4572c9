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
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The tests in this file check that every entry point reads its request
// through the one door of docs/security.md: a function wrapper's argument,
// once marshalled, is refused wherever an event with the same bytes would
// be, including inside json.RawMessage values and JSON held in strings.

// doorOrder is what the wrapped functions of these tests read, as a user's
// function would: encoding/json into a struct.
type doorOrder struct {
	OrderID string `json:"order_id"`
	SKU     string `json:"sku"`
	Amount  int    `json:"amount"`
	Account string `json:"account"`
}

// doorEntry builds an entry point over store and returns a call of it on
// the JSON text doc, placed in the entry point's own argument type, and
// what the function read from it.
type doorEntry func(t *testing.T, store idempotency.Store, runs *int, opts ...idempotency.Option) func(doc string) (doorOrder, error)

// rawEntry wraps a function of a json.RawMessage, which json.Marshal
// copies into the argument's bytes as it is.
func rawEntry(t *testing.T, store idempotency.Store, runs *int, opts ...idempotency.Option) func(string) (doorOrder, error) {
	f, err := newFunc("raw", store, func(_ context.Context, in json.RawMessage) (doorOrder, error) {
		*runs++
		var o doorOrder
		err := json.Unmarshal(in, &o)
		return o, err
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return func(doc string) (doorOrder, error) { return f(context.Background(), json.RawMessage(doc)) }
}

// eventBridgeEntry wraps a function of an EventBridge event, whose detail
// is a json.RawMessage.
func eventBridgeEntry(t *testing.T, store idempotency.Store, runs *int, opts ...idempotency.Option) func(string) (doorOrder, error) {
	f, err := newFunc("eventbridge", store, func(_ context.Context, in events.CloudWatchEvent) (doorOrder, error) {
		*runs++
		var o doorOrder
		err := json.Unmarshal(in.Detail, &o)
		return o, err
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return func(doc string) (doorOrder, error) {
		return f(context.Background(), events.CloudWatchEvent{ID: "e-1", DetailType: "order", Source: "shop", Detail: json.RawMessage(doc)})
	}
}

// sqsEntry wraps a function of an SQS message, whose body holds the JSON.
func sqsEntry(t *testing.T, store idempotency.Store, runs *int, opts ...idempotency.Option) func(string) (doorOrder, error) {
	f, err := newFunc("sqs", store, func(_ context.Context, in events.SQSMessage) (doorOrder, error) {
		*runs++
		var o doorOrder
		err := json.Unmarshal([]byte(in.Body), &o)
		return o, err
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return func(doc string) (doorOrder, error) {
		return f(context.Background(), events.SQSMessage{MessageId: "m-1", Body: doc})
	}
}

// handlerEntry is Wrap's handler on the same document as an event, for
// comparison: every entry point must answer alike.
func handlerEntry(t *testing.T, store idempotency.Store, runs *int, opts ...idempotency.Option) func(string) (doorOrder, error) {
	h, err := idempotency.New(store, func(_ context.Context, in doorOrder) (doorOrder, error) {
		*runs++
		return in, nil
	}, append([]idempotency.Option{idempotency.WithKeyPrefix("handler")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return func(doc string) (doorOrder, error) {
		out, err := h.Invoke(context.Background(), []byte(doc))
		if err != nil {
			return doorOrder{}, err
		}
		var o doorOrder
		return o, json.Unmarshal(out, &o)
	}
}

// doorEntries are the entry points that the tests of this file run, and
// where each one's argument holds the document.
var doorEntries = []struct {
	name string
	at   string
	make doorEntry
}{
	{"Wrap", "", handlerEntry},
	{"WrapFunc json.RawMessage", "", rawEntry},
	{"WrapFunc EventBridge", "detail.", eventBridgeEntry},
	{"WrapFunc SQS", "powertools_json(body).", sqsEntry},
}

func TestOneDoor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key        string // relative to the document
		validation string
		first      string // completes
		attack     string // refused, before any store call
	}{
		{
			name:   "a case variant beside the key",
			key:    "order_id",
			first:  `{"order_id":"A","amount":1}`,
			attack: `{"order_id":"A","ORDER_ID":"B","amount":1}`,
		},
		{
			name:   "a case variant alone",
			key:    "order_id",
			first:  `{"order_id":"A","amount":5}`,
			attack: `{"Order_Id":"B","amount":5}`,
		},
		{
			name:   "a long s folds to s",
			key:    "sku",
			first:  `{"sku":"A"}`,
			attack: `{"sku":"A","\u017fku":"B"}`,
		},
		{
			name:   "the key repeated",
			key:    "order_id",
			first:  `{"order_id":"A"}`,
			attack: `{"order_id":"A","order_id":"B"}`,
		},
		{
			name:       "a case variant of the validated amount",
			key:        "order_id",
			validation: "amount",
			first:      `{"order_id":"A","amount":1}`,
			attack:     `{"order_id":"A","amount":1,"AMOUNT":999}`,
		},
		{
			name:   "invalid UTF-8",
			key:    "account",
			first:  `{"account":"acct-1"}`,
			attack: "{\"account\":\"acct-\xff\"}",
		},
		{
			name:   "a lone surrogate",
			key:    "account",
			first:  `{"account":"acct-1"}`,
			attack: `{"account":"acct-\ud800"}`,
		},
		{
			name:   "folded names off the key's path",
			key:    "order_id",
			first:  `{"order_id":"A","note":"x"}`,
			attack: `{"order_id":"A","note":"x","NOTE":"y"}`,
		},
	}
	for _, entry := range doorEntries {
		for _, tc := range tests {
			t.Run(entry.name+"/"+tc.name, func(t *testing.T) {
				opts := []idempotency.Option{idempotency.WithEventKey(entry.at + tc.key), idempotency.WithKeyRequired(true)}
				if tc.validation != "" {
					opts = append(opts, idempotency.WithPayloadValidation(entry.at+tc.validation))
				}
				store := idempotencytest.NewStore()
				runs := 0
				call := entry.make(t, store, &runs, opts...)
				if _, err := call(tc.first); err != nil {
					t.Fatalf("first call on %s: %v", tc.first, err)
				}
				before := store.Counts()
				got, err := call(tc.attack)
				if _, ok := errors.AsType[*idempotency.InvalidEventError](err); !ok {
					t.Fatalf("call on %s = %+v, %v; want an *InvalidEventError", tc.attack, got, err)
				}
				if runs != 1 {
					t.Errorf("the function ran %d times, want once (the first call)", runs)
				}
				if after := store.Counts(); after != before {
					t.Errorf("store calls for the refused call: %+v, then %+v; want none", before, after)
				}
			})
		}
	}
}

// TestOneDoorReplays checks the other side of the one door: every entry
// point keys a well-formed document, and a duplicate of it is replayed.
func TestOneDoorReplays(t *testing.T) {
	t.Parallel()
	for _, entry := range doorEntries {
		t.Run(entry.name, func(t *testing.T) {
			store := idempotencytest.NewStore()
			runs := 0
			call := entry.make(t, store, &runs, idempotency.WithEventKey(entry.at+"order_id"), idempotency.WithPayloadValidation(entry.at+"amount"))
			// U+FFFD itself is text; its escape is what json.Marshal
			// writes for invalid UTF-8, and a function wrapper refuses it.
			doc := `{"order_id":"A","amount":10,"sku":"s-\u00e9","account":"acct-�"}`
			for range 2 {
				got, err := call(doc)
				if err != nil || got.OrderID != "A" || got.Amount != 10 {
					t.Fatalf("call = %+v, %v", got, err)
				}
			}
			if runs != 1 {
				t.Errorf("the function ran %d times, want once", runs)
			}
		})
	}
}

// gzipBomb returns base64 of gzip data that decompresses to n MiB of
// zeros: one member for a MiB, repeated, since a gzip reader reads
// concatenated members as one stream. 128 MiB take about 130 KB.
func gzipBomb(t *testing.T, n int) string {
	t.Helper()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return base64.StdEncoding.EncodeToString(bytes.Repeat(member.Bytes(), n))
}

// TestDecodeLimit sends a Kinesis record whose data gunzips to 128 MiB to
// a handler keyed on a field of the decompressed document, and measures
// what the invocation allocates: a small multiple of the limit, not the
// 128 MiB, and a refusal with the limit in it.
func TestDecodeLimit(t *testing.T) {
	event := fmt.Appendf(nil, `{"Records":[{"kinesis":{"partitionKey":"p","data":%q}}]}`, gzipBomb(t, 128))
	const key = "powertools_json(powertools_base64_gzip(Records[0].kinesis.data)).order_id"
	for _, tc := range []struct {
		name  string
		opts  []idempotency.Option
		limit int
	}{
		{"default limit", nil, 16 << 20},
		{"a limit of 1 MiB", []idempotency.Option{idempotency.WithJMESPath(jmespath.WithDecodeLimit(1 << 20))}, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := idempotencytest.NewStore()
			runs := 0
			h, err := idempotency.New(store, func(context.Context, json.RawMessage) (string, error) {
				runs++
				return "ok", nil
			}, append([]idempotency.Option{idempotency.WithKeyPrefix("kinesis"), idempotency.WithEventKey(key)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = h.Invoke(context.Background(), event)
			runtime.ReadMemStats(&after)

			tooLarge, ok := errors.AsType[*jmespath.TooLargeError](err)
			if _, invalid := errors.AsType[*idempotency.InvalidEventError](err); !invalid || !ok || tooLarge.Limit != tc.limit {
				t.Fatalf("Invoke: %v; want an *InvalidEventError for a document past %d bytes", err, tc.limit)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			if bound := uint64(3*tc.limit + 4*len(event)); allocated > bound {
				t.Errorf("the invocation allocated %d bytes, want at most %d (3 × the limit, 4 × the event)", allocated, bound)
			}
			t.Logf("allocated %.1f MiB for a limit of %d MiB (event %d KB)", float64(allocated)/(1<<20), tc.limit>>20, len(event)>>10)
			if runs != 0 || store.Counts() != (idempotencytest.Counts{}) {
				t.Errorf("runs %d, store calls %+v; want none", runs, store.Counts())
			}
		})
	}
}

func TestDecodeLimitNotAboveZero(t *testing.T) {
	t.Parallel()
	for _, n := range []int{-1} {
		_, err := idempotency.New(idempotencytest.NewStore(), func(context.Context, json.RawMessage) (string, error) { return "", nil },
			idempotency.WithKeyPrefix("p"), idempotency.WithJMESPath(jmespath.WithDecodeLimit(n)))
		if e, ok := errors.AsType[*idempotency.ConfigError](err); !ok || e.Name != "WithJMESPath" {
			t.Errorf("WithJMESPath(jmespath.WithDecodeLimit(%d)): %v, want a *ConfigError naming WithJMESPath", n, err)
		}
	}
}

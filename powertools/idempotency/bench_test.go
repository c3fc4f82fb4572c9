package idempotency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// placeholder is the order_id in testdata/apigw-v2-event.json; the
// benchmarks overwrite its digits to make a new key.
const placeholder = "ord-000000000000"

// benchEvent loads the ~2 KB API Gateway HTTP API event and returns it with
// a function that gives it order_id number n, in place.
func benchEvent(b *testing.B) (event []byte, setOrder func(n int)) {
	b.Helper()
	event, err := os.ReadFile("testdata/apigw-v2-event.json")
	if err != nil {
		b.Fatal(err)
	}
	at := bytes.Index(event, []byte(placeholder))
	if at < 0 {
		b.Fatal("no order_id placeholder in the event")
	}
	digits := event[at+len("ord-") : at+len(placeholder)]
	return event, func(n int) {
		for i := range digits {
			digits[i] = '0'
		}
		s := strconv.Itoa(n)
		copy(digits[len(digits)-len(s):], s)
	}
}

// The expressions of the benchmarks on the 2.2 KB event, as in the
// payments example: the key in the body, and a retry must carry the same
// amount and currency.
const (
	benchKey        = "powertools_json(body).order_id"
	benchValidation = "powertools_json(body).[amount,currency]"
)

// orderHandler is a typical small API handler: it reads the request and
// answers with a short JSON body.
func orderHandler(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return events.APIGatewayV2HTTPResponse{
		StatusCode: 201,
		Headers:    map[string]string{"content-type": "application/json"},
		Body:       `{"status":"accepted","request":"` + req.RequestContext.RequestID + `"}`,
	}, nil
}

// bareCall is what aws-lambda-go does for orderHandler without the
// middleware: decode the event, call the handler, encode the response.
func bareCall(b *testing.B, ctx context.Context, event []byte) {
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(event, &req); err != nil {
		b.Fatal(err)
	}
	resp, err := orderHandler(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := json.Marshal(resp); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMiddleware measures the middleware's overhead over the bare
// handler on its two paths: a first call (a new key every iteration:
// Acquire, handler, Complete) and a replay (the same key: Acquire finds the
// COMPLETE record).
func BenchmarkMiddleware(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()

	b.Run("bare", func(b *testing.B) {
		event, setOrder := benchEvent(b)
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			setOrder(i)
			bareCall(b, ctx, event)
		}
	})

	newHandler := func() *idempotency.Handler {
		return idempotency.Wrap(idempotencytest.NewStore(), orderHandler,
			idempotency.WithKeyPrefix("orders"),
			idempotency.WithEventKey(benchKey),
			idempotency.WithPayloadValidation(benchValidation))
	}

	b.Run("first_call", func(b *testing.B) {
		event, setOrder := benchEvent(b)
		h := newHandler()
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			setOrder(i)
			if _, err := h.Invoke(ctx, event); err != nil {
				b.Fatal(err)
			}
		}
	})

	// first_call_steady is first_call with the store at a steady size, as
	// TTL keeps a real table: the keys cycle through a ring, and the clock
	// moves past the expiry before a key comes round again, so every call
	// still takes a key nobody holds. first_call's store grows by a record
	// per call, and its map growth and GC marking are the store's cost, not
	// the middleware's.
	b.Run("first_call_steady", func(b *testing.B) {
		event, setOrder := benchEvent(b)
		h, tick := steadyHandler(orderHandler, benchKey, idempotency.WithPayloadValidation(benchValidation))
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			setOrder(i % steadyKeys)
			tick()
			if _, err := h.Invoke(ctx, event); err != nil {
				b.Fatal(err)
			}
		}
	})

	// search_key is the part of both paths that reads the 2 KB event:
	// selecting the key and the validated part with JMESPath on the raw
	// bytes, in one pass that validates all of them (SearchJSONAll).
	b.Run("search_key", func(b *testing.B) {
		event, setOrder := benchEvent(b)
		setOrder(1)
		key, validation := jmespath.MustCompile(benchKey), jmespath.MustCompile(benchValidation)
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := jmespath.SearchJSONAll(event, key, validation); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("replay", func(b *testing.B) {
		event, setOrder := benchEvent(b)
		setOrder(1)
		h := newHandler()
		if _, err := h.Invoke(ctx, event); err != nil {
			b.Fatal(err)
		}
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := h.Invoke(ctx, event); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU turns on allocation reporting and returns a function that
// reports the process CPU time per operation as cpu-ns/op (see processCPU).
func reportCPU(b *testing.B) func() {
	b.ReportAllocs()
	start, ok := processCPU()
	return func() {
		if end, ok2 := processCPU(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkKeyOf is what every call pays before its first store request:
// the strict read of the event and the key's hash, on the event of the
// comparison with Powertools (bench/powertools), key "id". On Redis, a
// duplicate is one command, and this alone is more than a tenth of
// go-redis's cost for it (docs/benchmarks.md).
func BenchmarkKeyOf(b *testing.B) {
	h := idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, struct{}) (int, error) { return 1, nil },
		idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("bench"))
	event := []byte(`{"id":"go-12345-1796170457829239000-17","amount":1250,"currency":"EUR"}`)
	defer reportCPU(b)()
	for b.Loop() {
		if _, _, err := h.KeyOf(event); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMiddlewareSmallEvent runs the three paths on a 20-byte event, so
// that finding the key costs next to nothing: what remains is the
// middleware itself (hashing, lease token, store calls, context) over the
// in-memory store.
func BenchmarkMiddlewareSmallEvent(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	fn := func(context.Context, struct{}) (int, error) { return 1, nil }
	newEvent := func() []byte { return []byte(`{"k":"0000000000"}`) }
	b.Run("bare", func(b *testing.B) {
		h := idempotency.Wrap(nil, fn, idempotency.WithDisabled(true)) // decode, call, encode
		event := newEvent()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := h.Invoke(ctx, event); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, path := range []string{"first_call", "first_call_steady", "replay"} {
		b.Run(path, func(b *testing.B) {
			h := idempotency.Wrap(idempotencytest.NewStore(), fn, idempotency.WithKeyPrefix("p"), idempotency.WithEventKey("k"))
			tick := func() {}
			if path == "first_call_steady" {
				h, tick = steadyHandler(fn, "k")
			}
			event := newEvent()
			defer reportCPU(b)()
			for i := 0; b.Loop(); i++ {
				tick()
				switch path {
				case "first_call":
					n := strconv.Itoa(i)
					copy(event[len(event)-2-len(n):], n)
				case "first_call_steady":
					n := strconv.Itoa(i % steadyKeys)
					copy(event[len(event)-2-len(n):], n)
				}
				if _, err := h.Invoke(ctx, event); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// steadyKeys is the size of the key ring of the first_call_steady paths.
const steadyKeys = 4096

// steadyHandler wraps fn over an in-memory store with a clock that tick
// moves on by more than the records' lifetime, so that a key's record has
// expired whenever the key comes round again.
func steadyHandler[In, Out any](fn func(context.Context, In) (Out, error), key string, opts ...idempotency.Option) (*idempotency.Handler, func()) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := idempotency.Wrap(idempotencytest.NewStore(), fn, append([]idempotency.Option{
		idempotency.WithKeyPrefix("p"),
		idempotency.WithEventKey(key),
		idempotency.WithExpiresAfter(time.Minute),
		idempotency.WithClock(func() time.Time { return now })}, opts...)...)
	return h, func() { now = now.Add(2 * time.Minute) }
}

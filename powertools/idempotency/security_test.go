package idempotency_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The tests in this file check the promise of docs/security.md: an event the
// middleware accepts is keyed and validated on exactly the values that
// encoding/json gives the handler's struct; any other event fails closed
// with an *InvalidEventError, before any store call, without running the
// handler or replaying a response.

// integrityView is what the handlers of these tests read: the event, or an
// API Gateway request's body, decoded by encoding/json into a struct, which
// matches member names case-insensitively, lets the last duplicate win,
// ignores null and merges a repeated object.
type integrityView struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
	Kind    string `json:"kind"`
	SKU     string `json:"sku"`
	Item    struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
	} `json:"item"`
	A int `json:"a"`
}

// integrityHarness is a handler over an in-memory store that counts its
// runs and its replays and keeps the key each run was given.
type integrityHarness struct {
	store   *idempotencytest.Store
	h       *idempotency.Handler
	runs    int
	replays int
	keys    []string // KeyFromContext of each run; "" for none
}

// newIntegrityHarness builds the harness with the key prefix of keyOf. With
// apigw the handler takes an API Gateway HTTP API request and decodes its
// body, as a handler behind API Gateway does; otherwise it takes the event.
func newIntegrityHarness(t *testing.T, apigw bool, opts ...idempotency.Option) *integrityHarness {
	t.Helper()
	hs := &integrityHarness{store: idempotencytest.NewStore()}
	opts = append([]idempotency.Option{
		idempotency.WithKeyPrefix(prefix),
		idempotency.WithReplayHook(func(_ context.Context, out integrityView, _ *idempotency.Record) (integrityView, error) {
			hs.replays++
			return out, nil
		}),
	}, opts...)
	ran := func(ctx context.Context) {
		hs.runs++
		key, _ := idempotency.KeyFromContext(ctx)
		hs.keys = append(hs.keys, key)
	}
	var err error
	if apigw {
		hs.h, err = idempotency.New(hs.store, func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (integrityView, error) {
			ran(ctx)
			var v integrityView
			err := json.Unmarshal([]byte(req.Body), &v)
			return v, err
		}, opts...)
	} else {
		hs.h, err = idempotency.New(hs.store, func(ctx context.Context, v integrityView) (integrityView, error) {
			ran(ctx)
			return v, nil
		}, opts...)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return hs
}

func (hs *integrityHarness) invoke(event string) ([]byte, error) {
	return hs.h.Invoke(context.Background(), []byte(event))
}

// httpEvent is an API Gateway HTTP API (v2) request for POST /orders
// carrying body.
func httpEvent(body string) string {
	return httpRequest(events.APIGatewayV2HTTPRequest{Body: body})
}

// httpRequest completes req as API Gateway sends a POST /orders and encodes
// it.
func httpRequest(req events.APIGatewayV2HTTPRequest) string {
	req.Version, req.RouteKey, req.RawPath = "2.0", "POST /orders", "/orders"
	req.RequestContext.HTTP.Method = "POST"
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// keyedRequest is an API Gateway request keyed by its Idempotency-Key
// header, for the cases that validate the body rather than key on it.
func keyedRequest(key, body string, isBase64 bool) string {
	return httpRequest(events.APIGatewayV2HTTPRequest{
		Headers:         map[string]string{"idempotency-key": key},
		Body:            body,
		IsBase64Encoded: isBase64,
	})
}

const (
	bodyOrderID = "powertools_json(body).order_id"
	bodyAmount  = "powertools_json(body).amount"
	headerKey   = `headers."idempotency-key"`
)

// integrityCase is an attack: seed events, legitimate, run first and must
// succeed; then the attack, which must be refused.
type integrityCase struct {
	name       string
	apigw      bool // the handler takes an API Gateway request (see newIntegrityHarness)
	key        string
	validation string // "" for none
	required   bool   // WithKeyRequired
	seed       []string
	attack     string
}

// integrityCases are also the seeds of the key integrity fuzz target.
var integrityCases = []integrityCase{
	// Member names on the key path, in the event itself.
	{
		name:   "ASCII case variant after the exact name",
		key:    "order_id",
		seed:   []string{`{"order_id":"A","amount":5}`},
		attack: `{"order_id":"A","amount":5,"ORDER_ID":"B"}`, // the struct reads B, the key was A's
	},
	{
		name:   "ASCII case variant before the exact name",
		key:    "order_id",
		seed:   []string{`{"order_id":"A","amount":5}`},
		attack: `{"ORDER_ID":"B","order_id":"A","amount":5}`,
	},
	{
		name:   "exact duplicate name",
		key:    "order_id",
		seed:   []string{`{"order_id":"A","amount":5}`},
		attack: `{"order_id":"A","amount":5,"order_id":"B"}`,
	},
	{
		name:   "case variant only, key not required",
		key:    "order_id",
		seed:   []string{`{"order_id":"A","amount":5}`},
		attack: `{"Order_Id":"B","amount":5}`, // the struct reads B, the middleware saw no key
	},
	{
		name:     "case variant only, key required",
		key:      "order_id",
		required: true,
		seed:     []string{`{"order_id":"A","amount":5}`},
		attack:   `{"Order_Id":"B","amount":5}`,
	},
	{
		name:   "Kelvin sign folds to k",
		key:    "kind",
		seed:   []string{`{"kind":"A"}`},
		attack: `{"kind":"A","\u212aind":"B"}`, // JSON escape of U+212A
	},
	{
		name:   "Kelvin sign only",
		key:    "kind",
		seed:   []string{`{"kind":"A"}`},
		attack: `{"\u212aind":"B"}`,
	},
	{
		name:   "long s folds to s",
		key:    "sku",
		seed:   []string{`{"sku":"A"}`},
		attack: "{\"sku\":\"A\",\"\u017fku\":\"B\"}", // U+017F as UTF-8
	},
	{
		name:   "repeated object merges into the struct",
		key:    "item.id",
		seed:   []string{`{"item":{"id":"A","amount":1}}`},
		attack: `{"item":{"id":"B"},"item":{"amount":1}}`, // the struct reads id B; the last item has none
	},
	{
		name:   "null after an object leaves the struct as it was",
		key:    "item.id",
		seed:   []string{`{"item":{"id":"A","amount":1}}`},
		attack: `{"item":{"id":"B"},"item":null}`,
	},
	{
		name:   "whole event key holding case variants",
		key:    "",
		seed:   []string{`{"order_id":"A"}`},
		attack: `{"order_id":"A","ORDER_ID":"B"}`,
	},

	// Validated member names, in the event itself.
	{
		name:       "validation: duplicate ending in null",
		key:        "order_id",
		validation: "amount",
		seed:       []string{`{"order_id":"A","amount":null}`},
		attack:     `{"order_id":"A","amount":100,"amount":null}`, // both hash as null; the struct reads 100
	},
	{
		name:       "validation: case variant",
		key:        "order_id",
		validation: "amount",
		seed:       []string{`{"order_id":"A","amount":1}`},
		attack:     `{"order_id":"A","amount":1,"AMOUNT":999}`,
	},
	{
		name:       "validation: case variant only",
		key:        "order_id",
		validation: "amount",
		seed:       []string{`{"order_id":"A"}`},
		attack:     `{"order_id":"A","AMOUNT":999}`, // both hash as null; the struct reads 999
	},
	{
		name:       "validation: case variant only, whole event key",
		key:        "",
		validation: "amount",
		attack:     `{"order_id":"A","AMOUNT":999}`,
	},

	// The same tricks in the JSON document of an API Gateway body.
	{
		name:  "body: ASCII case variant of the key",
		apigw: true, key: bodyOrderID, validation: bodyAmount,
		seed:   []string{httpEvent(`{"order_id":"A","amount":5}`)},
		attack: httpEvent(`{"order_id":"A","amount":5,"ORDER_ID":"B"}`),
	},
	{
		name:  "body: exact duplicate of the key",
		apigw: true, key: bodyOrderID, validation: bodyAmount,
		seed:   []string{httpEvent(`{"order_id":"A","amount":5}`)},
		attack: httpEvent(`{"order_id":"A","amount":5,"order_id":"B"}`),
	},
	{
		name:  "body: case variant only",
		apigw: true, key: bodyOrderID, validation: bodyAmount,
		seed:   []string{httpEvent(`{"order_id":"A","amount":5}`)},
		attack: httpEvent(`{"Order_Id":"B","amount":5}`),
	},
	{
		name:  "body: case variant only, key required",
		apigw: true, key: bodyOrderID, validation: bodyAmount, required: true,
		seed:   []string{httpEvent(`{"order_id":"A","amount":5}`)},
		attack: httpEvent(`{"Order_Id":"B","amount":5}`),
	},
	{
		name:  "body: Kelvin sign",
		apigw: true, key: "powertools_json(body).kind", validation: bodyAmount,
		seed:   []string{httpEvent(`{"kind":"A","amount":5}`)},
		attack: httpEvent(`{"kind":"A","amount":5,"\u212aind":"B"}`),
	},
	{
		name:  "body: long s in a validated name",
		apigw: true, key: bodyOrderID, validation: "powertools_json(body).sku",
		seed:   []string{httpEvent(`{"order_id":"A","sku":"S-1"}`)},
		attack: httpEvent("{\"order_id\":\"A\",\"sku\":\"S-1\",\"\u017fku\":\"S-9\"}"),
	},
	{
		name:  "body: case variant of the validated name",
		apigw: true, key: bodyOrderID, validation: bodyAmount,
		seed:   []string{httpEvent(`{"order_id":"A","amount":5}`)},
		attack: httpEvent(`{"order_id":"A","amount":5,"AMOUNT":999}`),
	},
	{
		name:  "body: case variant only of the validated name",
		apigw: true, key: bodyOrderID, validation: bodyAmount,
		seed:   []string{httpEvent(`{"order_id":"A"}`)},
		attack: httpEvent(`{"order_id":"A","AMOUNT":999}`),
	},
	{
		name:  "body: validated duplicate ending in null",
		apigw: true, key: bodyOrderID, validation: bodyAmount,
		seed:   []string{httpEvent(`{"order_id":"A","amount":null}`)},
		attack: httpEvent(`{"order_id":"A","amount":999,"amount":null}`),
	},
	{
		name:  "body: repeated object merges into the struct",
		apigw: true, key: "powertools_json(body).item.id", validation: "powertools_json(body).item.amount",
		seed:   []string{httpEvent(`{"item":{"id":"A","amount":1}}`)},
		attack: httpEvent(`{"item":{"id":"A","amount":1},"item":{"amount":999}}`), // charged again, with no key
	},
	{
		name:  "body: key selects an object holding case variants",
		apigw: true, key: "powertools_json(body)",
		seed:   []string{httpEvent(`{"a":1}`)},
		attack: httpEvent(`{"a":1,"A":2}`),
	},
	{
		name:  "body: key selects an object holding a repeated object",
		apigw: true, key: "powertools_json(body)",
		seed:   []string{httpEvent(`{"item":{"amount":2}}`)},
		attack: httpEvent(`{"item":{"id":"A"},"item":{"amount":2}}`), // same key as the seed; the struct reads id A
	},

	// Expressions that fail on the event, rather than select nothing.
	{
		name:  "key: body is not JSON",
		apigw: true, key: bodyOrderID,
		attack: httpEvent("order_id=B&amount=1"),
	},
	{
		name:  "key: body is not JSON, key required",
		apigw: true, key: bodyOrderID, required: true,
		attack: httpEvent("order_id=B&amount=1"),
	},
	{
		name:  "key: body is a number",
		apigw: true, key: bodyOrderID,
		attack: `{"version":"2.0","routeKey":"POST /orders","body":5}`,
	},
	{
		name:  "validation: body is not JSON",
		apigw: true, key: headerKey, validation: "powertools_json(body)",
		seed:   []string{keyedRequest("A", "null", false)},
		attack: keyedRequest("A", "order_id=B&amount=999", false), // hashed as null, like the seed's
	},
	{
		name:  "validation: body is base64",
		apigw: true, key: headerKey, validation: "powertools_json(body)",
		seed:   []string{keyedRequest("A", "null", false)},
		attack: keyedRequest("A", base64.StdEncoding.EncodeToString([]byte(`{"order_id":"B","amount":999}`)), true),
	},

	// Names that fold alike off every path, and objects that the
	// expression builds (docs/security.md, "What is refused").
	{
		name:  "case variants in the query string",
		apigw: true, key: bodyOrderID, validation: bodyAmount,
		seed: []string{httpEvent(`{"order_id":"A","amount":5}`)},
		attack: httpRequest(events.APIGatewayV2HTTPRequest{
			QueryStringParameters: map[string]string{"a": "1", "A": "2"},
			Body:                  `{"order_id":"A","amount":5}`,
		}),
	},
	{
		name:   "case variants of a name that is not validated",
		key:    "order_id",
		seed:   []string{`{"order_id":"A","amount":1}`},
		attack: `{"order_id":"A","amount":1,"AMOUNT":2}`,
	},
	{
		name:  "body: case variants off the path",
		apigw: true, key: bodyOrderID,
		seed:   []string{httpEvent(`{"order_id":"A","note":"x"}`)},
		attack: httpEvent(`{"order_id":"A","note":"x","NOTE":"y"}`),
	},
	{
		name:   "merge's default beside a case variant",
		key:    "merge(`{\"order_id\":\"none\"}`, @).order_id",
		seed:   []string{`{"order_id":"A"}`, `{"amount":1}`},
		attack: `{"Order_Id":"B"}`, // keyed "none" as the seed without an order id was
	},
	{
		name:   "a multi-select hash with names that fold alike",
		key:    "{o: order_id, O: sku}.o",
		attack: `{"order_id":"A","sku":"B"}`, // a struct field o would read O's B
	},

	// Text that is not UTF-8: encoding/json reads it as U+FFFD.
	{
		name:   "invalid UTF-8 in the key",
		key:    "order_id",
		seed:   []string{"{\"order_id\":\"A-\ufffd\"}"},
		attack: "{\"order_id\":\"A-\xff\"}",
	},
	{
		name:   "a lone surrogate in the key",
		key:    "order_id",
		seed:   []string{`{"order_id":"A-\ufffd"}`},
		attack: `{"order_id":"A-\udc00"}`,
	},
	{
		name:   "invalid UTF-8 off the path",
		key:    "order_id",
		seed:   []string{`{"order_id":"A"}`},
		attack: "{\"order_id\":\"A\",\"note\":\"\xfe\"}",
	},

	// An event that is not JSON at all.
	{
		name:   "truncated event",
		key:    "order_id",
		seed:   []string{`{"order_id":"A","amount":5}`},
		attack: `{"order_id":"A","amount":5`,
	},
	{
		name:   "broken literal",
		key:    "order_id",
		seed:   []string{`{"order_id":"A","amount":5}`},
		attack: `{"order_id":"A","amount":tru}`,
	},
}

func (tc integrityCase) options() []idempotency.Option {
	opts := []idempotency.Option{idempotency.WithEventKey(tc.key), idempotency.WithKeyRequired(tc.required)}
	if tc.validation != "" {
		opts = append(opts, idempotency.WithPayloadValidation(tc.validation))
	}
	return opts
}

func TestKeyIntegrity(t *testing.T) {
	t.Parallel()
	for _, tc := range integrityCases {
		t.Run(tc.name, func(t *testing.T) {
			hs := newIntegrityHarness(t, tc.apigw, tc.options()...)
			for i, ev := range tc.seed {
				if _, err := hs.invoke(ev); err != nil {
					t.Fatalf("seed %d: %v", i, err)
				}
			}
			runs, replays := hs.runs, hs.replays
			counts, records := hs.store.Counts(), hs.store.Records()

			resp, err := hs.invoke(tc.attack)
			var invalid *idempotency.InvalidEventError
			if !errors.As(err, &invalid) || !errors.As(err, new(*idempotency.InvalidEventError)) {
				t.Errorf("Invoke = %s, %v; want an *InvalidEventError", resp, err)
			}
			if hs.runs != runs || hs.replays != replays {
				t.Errorf("handler runs %d, replays %d; want none", hs.runs-runs, hs.replays-replays)
			}
			if got := hs.store.Counts(); got != counts {
				t.Errorf("store calls %+v, then %+v; want none for the attack", counts, got)
			}
			if diff := cmp.Diff(records, hs.store.Records()); diff != "" {
				t.Errorf("records changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestKeyIntegrityAccepted checks that the rules refuse no more than they
// must: a name off every path that folds to no other, names that differ by
// more than case, and names written with escapes, are read as usual.
func TestKeyIntegrityAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		apigw      bool
		key        string
		validation string
		event      string
		want       string // the order id keyed on: the key is keyOf(want)
	}{
		{
			name: "a case variant off every path, alone",
			key:  "order_id", validation: "amount",
			event: `{"order_id":"A","amount":1,"Note":"x"}`,
			want:  "A",
		},
		{
			name:  "body: a case variant off every path, alone",
			apigw: true, key: bodyOrderID,
			event: httpEvent(`{"order_id":"A","Note":"x"}`),
			want:  "A",
		},
		{
			name: "names that differ by more than case",
			key:  "order_id", validation: "amount",
			event: `{"order_id":"A","order-id":"B","orderid":"C","order_id_":"D","amount":1}`,
			want:  "A",
		},
		{
			name: "exact name written with an escape",
			key:  "order_id", event: `{"order\u005fid":"A"}`,
			want: "A",
		},
		{
			name:  "body: exact name written with an escape",
			apigw: true, key: bodyOrderID, validation: bodyAmount,
			event: httpEvent(`{"order\u005fid":"A","amount":5}`),
			want:  "A",
		},
		{
			name: "one validated null",
			key:  "order_id", validation: "amount",
			event: `{"order_id":"A","amount":null}`,
			want:  "A",
		},
		{
			name: "Kelvin sign in a name off the path",
			key:  "sku", event: "{\"sku\":\"A\",\"\u212aind\":\"x\"}",
			want: "A",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := []idempotency.Option{idempotency.WithEventKey(tc.key)}
			if tc.validation != "" {
				opts = append(opts, idempotency.WithPayloadValidation(tc.validation))
			}
			hs := newIntegrityHarness(t, tc.apigw, opts...)
			for i := range 2 {
				if _, err := hs.invoke(tc.event); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if hs.runs != 1 || hs.replays != 1 || hs.keys[0] != keyOf(tc.want) {
				t.Errorf("runs %d with keys %q, replays %d; want one run keyed %q, then a replay", hs.runs, hs.keys, hs.replays, keyOf(tc.want))
			}
		})
	}
}

// TestKeyIntegrityAcceptsEventFixtures runs events as AWS sends them (the
// jmespath fixtures and this package's benchmark event) through a handler
// keyed on the whole event, on each envelope, and on a field reached
// through one.
func TestKeyIntegrityAcceptsEventFixtures(t *testing.T) {
	t.Parallel()
	type fixtureCase struct {
		file       string
		key        string
		validation string
		want       string // the string keyed on; "" when the key is a whole value
	}
	fixture := func(name string) string {
		return filepath.Join("..", "..", "jmespath", "testdata", "events", name+".json")
	}
	tests := []fixtureCase{
		{file: "testdata/apigw-v2-event.json", key: bodyOrderID, validation: bodyAmount, want: "ord-000000000000"},
		{file: fixture("apigw-http"), key: jmespath.EnvelopeAPIGatewayHTTP},
		{file: fixture("apigw-http"), key: bodyOrderID, validation: "powertools_json(body).total", want: "ord-1002"},
		{file: fixture("apigw-rest"), key: jmespath.EnvelopeAPIGatewayREST},
		{file: fixture("apigw-rest"), key: `headers."Idempotency-Key"`, validation: "powertools_json(body)", want: "6f1c2a4e-8d7b-4c3a-9e2f-1b0a9c8d7e6f"},
		{file: fixture("cloudwatch-logs"), key: jmespath.EnvelopeCloudWatchLogs},
		{file: fixture("cloudwatch-scheduled"), key: "id", want: "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa"},
		{file: fixture("eventbridge"), key: jmespath.EnvelopeEventBridge},
		{file: fixture("eventbridge"), key: "detail.order_id", validation: "detail.total", want: "ord-1002"},
		{file: fixture("kinesis"), key: jmespath.EnvelopeKinesisDataStream},
		{file: fixture("s3-eventbridge-sqs"), key: jmespath.EnvelopeS3EventBridgeSQS},
		{file: fixture("s3-firehose"), key: jmespath.EnvelopeS3KinesisFirehose},
		{file: fixture("s3-sns-firehose"), key: jmespath.EnvelopeS3SNSKinesisFirehose},
		{file: fixture("s3-sns-sqs"), key: jmespath.EnvelopeS3SNSSQS},
		{file: fixture("s3-sqs"), key: jmespath.EnvelopeS3SQS},
		{file: fixture("sns"), key: jmespath.EnvelopeSNS},
		{file: fixture("sns"), key: "powertools_json(Records[0].Sns.Message).order_id", want: "ord-1001"},
		{file: fixture("sqs"), key: jmespath.EnvelopeSQS},
		{file: fixture("sqs"), key: "powertools_json(Records[0].body).order_id", want: "ord-1001"},
	}
	all, err := filepath.Glob(fixture("*"))
	if err != nil || len(all) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range all {
		tests = append(tests, fixtureCase{file: file, key: ""}) // the whole event
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.file)+"/"+tc.key, func(t *testing.T) {
			event, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var runs, replays int
			var key string
			opts := []idempotency.Option{
				idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey(tc.key), idempotency.WithKeyRequired(true),
				idempotency.WithReplayHook(func(_ context.Context, out string, _ *idempotency.Record) (string, error) {
					replays++
					return out, nil
				}),
			}
			if tc.validation != "" {
				opts = append(opts, idempotency.WithPayloadValidation(tc.validation))
			}
			h := idempotency.Wrap(idempotencytest.NewStore(), func(ctx context.Context, ev json.RawMessage) (string, error) {
				runs++
				key, _ = idempotency.KeyFromContext(ctx)
				return "ok", nil
			}, opts...)
			for i := range 2 {
				if _, err := h.Invoke(context.Background(), event); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if runs != 1 || replays != 1 {
				t.Errorf("runs %d, replays %d; want one run, then a replay", runs, replays)
			}
			if tc.want != "" && key != keyOf(tc.want) {
				t.Errorf("key %q, want %q", key, keyOf(tc.want))
			}
		})
	}
}

// TestWrapFuncRefusesInvalidUTF8 checks that an argument json.Marshal
// cannot encode faithfully is refused: Marshal turns every invalid byte into
// U+FFFD, so two different arguments would share a key.
func TestWrapFuncRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	type lookup struct{ ID string }
	tests := []struct {
		name     string
		ids      []string // called in turn on one store
		wantRuns int      // 0: every call refused
	}{
		{"two invalid bytes that Marshal writes alike", []string{string([]byte{0xff}), string([]byte{0xfe})}, 0},
		{"an invalid byte inside valid text", []string{"ord-\xff1"}, 0},
		{"U+FFFD itself is text", []string{"\uFFFD", "\uFFFD"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := idempotencytest.NewStore()
			runs := 0
			f := idempotency.WrapFunc("lookup", store, func(_ context.Context, in lookup) (string, error) {
				runs++
				return in.ID, nil
			})
			for _, id := range tc.ids {
				got, err := f(context.Background(), lookup{ID: id})
				if tc.wantRuns > 0 {
					if err != nil || got != id {
						t.Errorf("f(%q) = %q, %v; want it accepted", id, got, err)
					}
					continue
				}
				var invalid *idempotency.InvalidEventError
				if !errors.As(err, &invalid) || !errors.As(err, new(*idempotency.InvalidEventError)) {
					t.Errorf("f(%q) = %q, %v; want an *InvalidEventError", id, got, err)
				}
			}
			if runs != tc.wantRuns {
				t.Errorf("fn ran %d times, want %d", runs, tc.wantRuns)
			}
			if tc.wantRuns == 0 {
				if c := store.Counts(); c != (idempotencytest.Counts{}) {
					t.Errorf("store calls %+v, want none", c)
				}
			}
		})
	}
}

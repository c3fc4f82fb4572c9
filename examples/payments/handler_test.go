package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/gopowertools/lambda/examples/internal/provider"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// fixture is the function wired to an in-memory store and a local provider.
type fixture struct {
	app      *App
	store    *idempotencytest.Store
	provider *provider.Server
}

func newFixture(t *testing.T, opts ...idempotency.Option) *fixture {
	t.Helper()
	prov := provider.New(nil)
	srv := httptest.NewServer(prov)
	t.Cleanup(srv.Close)
	store := idempotencytest.NewStore()
	client := &ProviderClient{BaseURL: srv.URL, Timeout: 5 * time.Second, HTTP: srv.Client()}
	log := slog.New(slog.DiscardHandler)
	opts = append(append(appOptions(log), idempotency.WithKeyPrefix("payments")), opts...)
	app, err := NewApp(store, client, log, opts...)
	if err != nil {
		t.Fatalf("NewApp: %v", err)
	}
	return &fixture{app: app, store: store, provider: prov}
}

// invoke calls the function as Lambda would, with a 30 s deadline.
func (f *fixture) invoke(t *testing.T, body string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := f.app.Handle(ctx, event(body))
	if err != nil {
		t.Fatalf("Handle(%s): %v", body, err)
	}
	return resp
}

func event(body string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: "POST /payments",
		RawPath:  "/payments",
		Headers:  map[string]string{"content-type": "application/json"},
		Body:     body,
	}
}

const order42 = `{"order_id":"order-42","customer":"cus_1","amount":1250,"currency":"EUR"}`

// ambiguousOrder names order_id twice: parsePayment reads o2, a key
// search that matched names exactly would read o1.
const ambiguousOrder = `{"order_id":"o1","ORDER_ID":"o2","customer":"cus_1","amount":1250,"currency":"EUR"}`

func TestFirstPaymentThenReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := f.invoke(t, order42)
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("first: status %d, body %s", first.StatusCode, first.Body)
	}
	var got Receipt
	if err := json.Unmarshal([]byte(first.Body), &got); err != nil {
		t.Fatal(err)
	}
	want := Receipt{PaymentID: "ch_0001", OrderID: "order-42", Amount: 1250, Currency: "EUR", Status: "charged"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("receipt (-want +got):\n%s", diff)
	}

	// The same order again, with its fields in another order: a retry,
	// answered with the first response marked as a replay.
	dup := f.invoke(t, `{"currency":"EUR","amount":1250,"customer":"cus_1","order_id":"order-42"}`)
	if diff := cmp.Diff(replayOf(first), dup); diff != "" {
		t.Errorf("duplicate differs from the first response marked as replayed (-want +dup):\n%s", diff)
	}
	if n := f.provider.Requests(); n != 1 {
		t.Errorf("provider got %d requests, want 1", n)
	}
	recs := f.store.Records()
	if len(recs) != 1 || recs[0].Status != idempotency.StatusComplete {
		t.Fatalf("records = %+v, want one COMPLETE record", recs)
	}
	if keys := f.provider.Keys(); keys[0] != recs[0].Key {
		t.Errorf("provider saw Idempotency-Key %q, want the record's key %q", keys[0], recs[0].Key)
	}
}

func TestConflictingPayment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if resp := f.invoke(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first: status %d, body %s", resp.StatusCode, resp.Body)
	}
	for _, body := range []string{
		`{"order_id":"order-42","customer":"cus_1","amount":9999,"currency":"EUR"}`,
		`{"order_id":"order-42","customer":"cus_1","amount":1250,"currency":"USD"}`,
	} {
		wantProblem(t, f.invoke(t, body), http.StatusUnprocessableEntity, "key-reused")
	}
	if n := f.provider.Requests(); n != 1 {
		t.Errorf("provider got %d requests, want 1", n)
	}
}

func TestInvalidPayment(t *testing.T) {
	t.Parallel()
	tests := map[string]events.APIGatewayV2HTTPRequest{
		"malformed JSON":      event(`{"order_id":`),
		"not an object":       event(`[1,2]`),
		"no order_id":         event(`{"customer":"cus_1","amount":1250,"currency":"EUR"}`),
		"empty order_id":      event(`{"order_id":"","customer":"cus_1","amount":1250,"currency":"EUR"}`),
		"no customer":         event(`{"order_id":"o1","amount":1250,"currency":"EUR"}`),
		"zero amount":         event(`{"order_id":"o1","customer":"cus_1","amount":0,"currency":"EUR"}`),
		"negative amount":     event(`{"order_id":"o1","customer":"cus_1","amount":-5,"currency":"EUR"}`),
		"fractional":          event(`{"order_id":"o1","customer":"cus_1","amount":12.5,"currency":"EUR"}`),
		"amount as string":    event(`{"order_id":"o1","customer":"cus_1","amount":"1250","currency":"EUR"}`),
		"bad currency":        event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"euro"}`),
		"unknown field":       event(`{"order_id":"o1","customer":"cus_1","ammount":1250,"currency":"EUR"}`),
		"two values":          event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"EUR"} {}`),
		"items short":         event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"EUR","items":[{"sku":"A","quantity":2,"unit_amount":600}]}`),
		"items empty":         event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"EUR","items":[]}`),
		"item without sku":    event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"EUR","items":[{"quantity":1,"unit_amount":1250}]}`),
		"item of none":        event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"EUR","items":[{"sku":"A","quantity":0,"unit_amount":1250}]}`),
		"item refunded":       event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"EUR","items":[{"sku":"A","quantity":1,"unit_amount":2500},{"sku":"B","quantity":1,"unit_amount":-1250}]}`),
		"items overflow":      event(`{"order_id":"o1","customer":"cus_1","amount":1250,"currency":"EUR","items":[{"sku":"A","quantity":4294967296,"unit_amount":4294967296}]}`),
		"items sum overflows": event(`{"order_id":"o1","customer":"cus_1","amount":1,"currency":"EUR","items":[{"sku":"A","quantity":1,"unit_amount":9223372036854775807},{"sku":"B","quantity":1,"unit_amount":2}]}`),
		"bad base64": {
			Version: "2.0", RouteKey: "POST /payments", Body: "%%%", IsBase64Encoded: true,
		},
	}
	// Accepted by parsePayment's struct decoding, refused by the
	// middleware (the adapter's problem type): the key and the charge
	// would read two orders.
	ambiguous := map[string]events.APIGatewayV2HTTPRequest{
		"order_id twice, in two cases": event(ambiguousOrder),
		"order_id in another case":     event(`{"Order_Id":"o1","customer":"cus_1","amount":1250,"currency":"EUR"}`),
		"amount twice":                 event(`{"order_id":"o1","customer":"cus_1","amount":1250,"amount":99999,"currency":"EUR"}`),
	}
	for problem, cases := range map[string]map[string]events.APIGatewayV2HTTPRequest{"": tests, "ambiguous-request": ambiguous} {
		for name, req := range cases {
			t.Run(name, func(t *testing.T) {
				f := newFixture(t)
				resp, err := f.app.Handle(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				wantProblem(t, resp, http.StatusBadRequest, problem)
				if c := f.store.Counts(); c != (idempotencytest.Counts{}) {
					t.Errorf("store calls %+v, want none: a 400 must leave no record", c)
				}
				if n := f.provider.Requests(); n != 0 {
					t.Errorf("provider got %d requests, want 0", n)
				}
			})
		}
	}
}

// An order's lines come back in the receipt, and are replayed with it;
// the provider is asked for the amount only.
func TestItemsInTheReceipt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	body := `{"order_id":"order-7","customer":"cus_1","amount":1250,"currency":"EUR","items":[` +
		`{"sku":"TEA-01","name":"Green tea, 100 g","quantity":2,"unit_amount":450},{"sku":"MUG-02","quantity":1,"unit_amount":350}]}`
	first := f.invoke(t, body)
	var got Receipt
	if err := json.Unmarshal([]byte(first.Body), &got); err != nil || first.StatusCode != http.StatusCreated {
		t.Fatalf("payment: %d %s, %v", first.StatusCode, first.Body, err)
	}
	want := []Item{{SKU: "TEA-01", Name: "Green tea, 100 g", Quantity: 2, UnitAmount: 450}, {SKU: "MUG-02", Quantity: 1, UnitAmount: 350}}
	if diff := cmp.Diff(want, got.Items); diff != "" {
		t.Errorf("receipt's items (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(replayOf(first), f.invoke(t, body)); diff != "" {
		t.Errorf("duplicate differs from the first response marked as replayed (-want +dup):\n%s", diff)
	}
	if n := f.provider.Requests(); n != 1 {
		t.Errorf("provider got %d requests, want 1", n)
	}
}

func TestBase64Body(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := event(base64.StdEncoding.EncodeToString([]byte(order42)))
	req.IsBase64Encoded = true
	resp, err := f.app.Handle(context.Background(), req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("Handle = %d %s, %v; want 201", resp.StatusCode, resp.Body, err)
	}
	// The stored key is the order id's, so the plain-text retry replays.
	if dup := f.invoke(t, order42); dup.Body != resp.Body {
		t.Errorf("plain retry of a base64 request: %d %s, want the stored %s", dup.StatusCode, dup.Body, resp.Body)
	}
	if n := f.provider.Requests(); n != 1 {
		t.Errorf("provider got %d requests, want 1", n)
	}
}

func TestPaymentInProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	release := f.provider.Hold()
	defer release()
	firstDone := make(chan events.APIGatewayV2HTTPResponse)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, _ := f.app.Handle(ctx, event(order42))
		firstDone <- resp
	}()
	<-f.provider.Arrived()

	dup := f.invoke(t, order42)
	if dup.StatusCode != http.StatusConflict {
		t.Fatalf("duplicate while the first runs: status %d, want 409; body %s", dup.StatusCode, dup.Body)
	}
	// The lease is the first invocation's deadline, 30 s away.
	if got := dup.Headers["Retry-After"]; got != "30" {
		t.Errorf("Retry-After = %q, want \"30\"", got)
	}

	release()
	if first := <-firstDone; first.StatusCode != http.StatusCreated {
		t.Fatalf("first: status %d, body %s", first.StatusCode, first.Body)
	}
	if n := f.provider.Requests(); n != 1 {
		t.Errorf("provider got %d requests, want 1", n)
	}
}

func TestProviderFailureReleasesTheRecord(t *testing.T) {
	t.Parallel()
	tests := map[string]func(*fixture){
		"error":   func(f *fixture) { f.provider.FailNext(1) },
		"timeout": func(f *fixture) { f.app.provider.Timeout = 50 * time.Millisecond; f.provider.SetDelay(time.Second) },
	}
	for name, breakProvider := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			breakProvider(f)
			if resp := f.invoke(t, order42); resp.StatusCode != http.StatusBadGateway {
				t.Fatalf("status %d, want 502; body %s", resp.StatusCode, resp.Body)
			}
			if recs := f.store.Records(); len(recs) != 0 {
				t.Fatalf("records after a failed charge: %+v, want none", recs)
			}

			f.app.provider.Timeout = 5 * time.Second
			f.provider.SetDelay(0)
			if resp := f.invoke(t, order42); resp.StatusCode != http.StatusCreated {
				t.Fatalf("retry: status %d, want 201; body %s", resp.StatusCode, resp.Body)
			}
			keys := f.provider.Keys()
			if len(keys) != 2 || keys[0] != keys[1] {
				t.Errorf("provider saw Idempotency-Keys %q, want the same key twice", keys)
			}
			if n := len(f.provider.Charges()); n != 1 {
				t.Errorf("provider made %d charges, want 1", n)
			}
		})
	}
}

func TestPanicReleasesTheRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.app.beforeCharge = func(Payment) { panic("boom") }
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the handler's panic", r)
			}
		}()
		_, _ = f.app.Handle(context.Background(), event(order42))
	}()
	if recs := f.store.Records(); len(recs) != 0 {
		t.Fatalf("records after a panic: %+v, want none", recs)
	}
	f.app.beforeCharge = nil
	if resp := f.invoke(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("retry after a panic: status %d, want 201; body %s", resp.StatusCode, resp.Body)
	}
}

func TestKeyPathsFromTheEnvironment(t *testing.T) {
	// One payment per customer: the second order of cus_1 replays the first.
	t.Setenv("POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH", "powertools_json(body).customer")
	t.Setenv("POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH", "powertools_json(body).customer")
	f := newFixture(t)
	first := f.invoke(t, order42)
	second := f.invoke(t, `{"order_id":"order-43","customer":"cus_1","amount":7,"currency":"USD"}`)
	if first.StatusCode != http.StatusCreated || second.Body != first.Body {
		t.Errorf("second order of the customer: %d %s, want the replay of %s", second.StatusCode, second.Body, first.Body)
	}
}

func TestMisconfiguredKeyPathFailsClosed(t *testing.T) {
	t.Setenv("POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH", "powertools_json(body).orderid")
	f := newFixture(t)
	wantProblem(t, f.invoke(t, order42), http.StatusBadRequest, "missing-key")
	if n := f.provider.Requests(); n != 0 {
		t.Errorf("provider got %d requests, want 0: no charge without idempotency", n)
	}
}

// A store that fails before the charge: 503 with Retry-After, no charge,
// and the retry charges once the store is back.
func TestStoreFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	store := &flakyStore{Store: f.store}
	store.down.Store(true)
	app, err := NewApp(store, f.app.provider, f.app.log, append(appOptions(f.app.log), idempotency.WithKeyPrefix("payments"))...)
	if err != nil {
		t.Fatal(err)
	}
	f.app = app
	if retry := wantProblem(t, f.invoke(t, order42), http.StatusServiceUnavailable, "store-unavailable"); retry != "1" {
		t.Errorf("Retry-After %q, want 1", retry)
	}
	if n := f.provider.Requests(); n != 0 {
		t.Fatalf("provider got %d requests while the store was down, want 0", n)
	}
	store.down.Store(false)
	if resp := f.invoke(t, order42); resp.StatusCode != http.StatusCreated {
		t.Errorf("retry: status %d, want 201; body %s", resp.StatusCode, resp.Body)
	}
}

// flakyStore fails every Acquire while down, as DynamoDB does when it
// throttles past the SDK's retries.
type flakyStore struct {
	*idempotencytest.Store
	down atomic.Bool
}

func (s *flakyStore) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if s.down.Load() {
		return nil, errors.New("ThrottlingException")
	}
	return s.Store.Acquire(ctx, rec, now)
}

// wantProblem checks that resp is an RFC 9457 problem with status, of the
// adapter's type name (docs/http.md), or of the function's own
// (about:blank) for "", and returns its Retry-After.
func wantProblem(t *testing.T, resp events.APIGatewayV2HTTPResponse, status int, name string) string {
	t.Helper()
	if resp.StatusCode != status || resp.Headers["Content-Type"] != "application/problem+json" {
		t.Fatalf("%d %v %s, want a %d problem", resp.StatusCode, resp.Headers, resp.Body, status)
	}
	var p struct {
		Type, Title, Detail, Code string
		Status                    int
	}
	if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
		t.Fatalf("problem %s: %v", resp.Body, err)
	}
	// The adapter's problems and the function's own are all of type
	// about:blank; the adapter's say which they are in code.
	if p.Type != "about:blank" || p.Code != name || p.Status != status || p.Title == "" || p.Detail == "" {
		t.Errorf("problem %s, want type about:blank, code %q, status %d, a title and a detail", resp.Body, name, status)
	}
	return resp.Headers["Retry-After"]
}

// replayOf is resp as a replay answers it: with the Idempotency-Replayed
// header.
func replayOf(resp events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
	headers := map[string]string{"Idempotency-Replayed": "true"}
	for k, v := range resp.Headers {
		headers[k] = v
	}
	resp.Headers = headers
	return resp
}

package main

// End-to-end tests: the payments function, built as Lambda runs it, under
// the Runtime Interface Emulator, against moto server and a local provider
// that counts requests. They need .tools/bin/aws-lambda-rie and
// TEST_MOTO_ENDPOINT, which `make test` provides; without them they skip
// (and fail under CI=true).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/examples/internal/provider"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The function binary is built once per test run, with the e2efaults tag
// that lets the panic test make it panic.
var bootstrap = emulator.Binary{Tags: []string{"e2efaults"}}

func TestMain(m *testing.M) {
	code := m.Run()
	bootstrap.Remove()
	os.Exit(code)
}

// e2e is one test's world: a table in moto, a provider, and the function's
// environment.
type e2e struct {
	t        *testing.T
	rie      string
	moto     string
	db       *dynamodb.Client
	table    string
	store    *dynamo.Store
	provider *provider.Server
	url      string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	rie, err := emulator.LocateRIE(testenv.RepoRoot())
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	moto := testenv.Endpoint(t, testenv.MotoEnv)
	x := &e2e{t: t, rie: rie, moto: moto, db: testenv.NewDynamoDB(moto), provider: provider.New(nil)}
	x.table = fmt.Sprintf("payments-e2e-%d", time.Now().UnixNano())
	ctx := context.Background()
	if err := dynamo.CreateTable(ctx, x.db, func(o *dynamo.Options) { o.TableName = x.table }); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() { x.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(x.table)}) })
	x.store, err = dynamo.New(x.db, func(o *dynamo.Options) { o.TableName = x.table })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(x.provider)
	t.Cleanup(srv.Close)
	x.url = srv.URL
	bootstrap.Path(t)
	return x
}

// function is one emulator running the payments function, and its output.
type function struct {
	em  *emulator.Emulator
	out *emulator.Buffer
}

// start runs the function under a new emulator. env adds to, or overrides,
// the environment that template.yaml gives the function.
func (x *e2e) start(env ...string) *function {
	x.t.Helper()
	base := []string{
		"AWS_REGION=us-east-1", // the emulator does not set it
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + x.moto,
		"AWS_LAMBDA_FUNCTION_NAME=payments",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=10",
		"POWERTOOLS_IDEMPOTENCY_TABLE=" + x.table,
		"PAYMENT_PROVIDER_URL=" + x.url,
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH=" + eventKeyPath,
		"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH=" + validationPath,
	}
	out := &emulator.Buffer{}
	em := emulator.StartTest(x.t, emulator.Config{
		RIE: x.rie, Bootstrap: bootstrap.Path(x.t), Env: append(base, env...), Output: out,
	})
	return &function{em: em, out: out}
}

// invoke sends an HTTP API event with body and returns the emulator's
// answer as it came.
func (f *function) invoke(t *testing.T, body string) emulator.Response {
	t.Helper()
	resp, err := f.send(body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// send is invoke for another goroutine than the test's, which must not
// call t.Fatal.
func (f *function) send(body string) (emulator.Response, error) {
	payload, err := json.Marshal(event(body))
	if err != nil {
		return emulator.Response{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return f.em.Invoke(ctx, payload)
}

// pay sends a payment and returns the function's HTTP response.
func (f *function) pay(t *testing.T, body string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	resp, err := f.trySend(body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// trySend is pay for another goroutine than the test's.
func (f *function) trySend(body string) (events.APIGatewayV2HTTPResponse, error) {
	raw, err := f.send(body)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(raw.Body, &resp); raw.Status != http.StatusOK || err != nil || resp.StatusCode == 0 {
		return resp, fmt.Errorf("invocation failed: emulator status %d, body %s", raw.Status, raw.Body)
	}
	return resp, nil
}

// deadline returns the deadline the function logged when it began to
// charge orderID: the deadline the emulator gave that invocation.
func (f *function) deadline(t *testing.T, orderID string) time.Time {
	t.Helper()
	var deadline time.Time
	charged := func(output string) bool {
		for line := range strings.Lines(output) {
			var entry struct {
				Msg        string `json:"msg"`
				OrderID    string `json:"order_id"`
				DeadlineMs int64  `json:"deadline_ms"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "charging" && entry.OrderID == orderID {
				deadline = time.UnixMilli(entry.DeadlineMs)
				return true
			}
		}
		return false
	}
	// The line may still be in the pipe when the response has come.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := f.out.Await(ctx, charged); err != nil {
		t.Fatalf("the function logged no charge of %s: %v", orderID, err)
	}
	return deadline
}

// items returns how many items the table holds.
func (x *e2e) items() int {
	x.t.Helper()
	out, err := x.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(x.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		x.t.Fatal(err)
	}
	return len(out.Items)
}

// record reads the record that the provider's n-th request was made for:
// its Idempotency-Key is the record's key.
func (x *e2e) record(n int) *idempotency.Record {
	x.t.Helper()
	return providerRecord(x.t, x.provider, x.store, n, "")
}

func (x *e2e) wantRequests(want int) {
	x.t.Helper()
	wantProviderRequests(x.t, x.provider, want)
}

// providerRecord reads from store the record that p's n-th request was
// made for: its Idempotency-Key is the record's key, which starts with
// prefix and "#" when prefix is set.
func providerRecord(t *testing.T, p *provider.Server, store idempotency.Store, n int, prefix string) *idempotency.Record {
	t.Helper()
	keys := p.Keys()
	if len(keys) <= n {
		t.Fatalf("the provider got %d requests, want more than %d", len(keys), n)
	}
	if prefix != "" && !strings.HasPrefix(keys[n], prefix+"#") {
		t.Fatalf("Idempotency-Key %q, want the prefix %s#", keys[n], prefix)
	}
	rec, err := store.Get(context.Background(), keys[n])
	if err != nil {
		t.Fatalf("Get(%s): %v", keys[n], err)
	}
	return rec
}

// wantProviderRequests fails t unless p got want charge requests.
func wantProviderRequests(t *testing.T, p *provider.Server, want int) {
	t.Helper()
	if got := p.Requests(); got != want {
		t.Errorf("the provider got %d charge requests, want %d", got, want)
	}
}

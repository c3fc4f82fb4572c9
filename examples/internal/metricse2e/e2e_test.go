package metricse2e

// The test needs .tools/bin/aws-lambda-rie and TEST_MOTO_ENDPOINT, which
// `make test` provides; without them it skips (and fails under CI=true).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/examples/internal/provider"
	"github.com/gopowertools/lambda/internal/testing/emftest"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// The payments function, built once for the test binary.
var bootstrap = emulator.Binary{Dir: "../../payments"}

func TestMain(m *testing.M) {
	code := m.Run()
	bootstrap.Remove()
	os.Exit(code)
}

const namespace = "Payments/E2E"

// TestPaymentsMetrics sends the payments function, configured only by its
// environment as template.yaml would, payments that end in each outcome a
// deployed function meets: new, replayed, conflict, released after the
// provider failed, in progress, refused as invalid, and a store failure.
// Every EMF document the functions wrote must pass the specification's
// rules, count exactly those outcomes, one per invocation, and carry the
// function and key prefix as dimensions; the outcome log must say the same.
func TestPaymentsMetrics(t *testing.T) {
	t.Parallel()
	rie, err := emulator.LocateRIE(testenv.RepoRoot())
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	moto := testenv.Endpoint(t, testenv.MotoEnv)
	db := testenv.NewDynamoDB(moto)
	table := fmt.Sprintf("metrics-e2e-%d", time.Now().UnixNano())
	ctx := context.Background()
	if err := dynamo.CreateTable(ctx, db, func(o *dynamo.Options) { o.TableName = table }); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() { db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}) })
	prov := provider.New(nil)
	srv := httptest.NewServer(prov)
	t.Cleanup(srv.Close)
	bootstrap.Path(t)

	var outputs []*emulator.Buffer
	start := func(table string) *emulator.Emulator {
		out := &emulator.Buffer{}
		outputs = append(outputs, out)
		return emulator.StartTest(t, emulator.Config{RIE: rie, Bootstrap: bootstrap.Path(t), Output: out, Env: []string{
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
			"AWS_ENDPOINT_URL_DYNAMODB=" + moto,
			"AWS_LAMBDA_FUNCTION_NAME=payments",
			"AWS_LAMBDA_FUNCTION_TIMEOUT=10",
			"POWERTOOLS_IDEMPOTENCY_TABLE=" + table,
			"PAYMENT_PROVIDER_URL=" + srv.URL,
			"POWERTOOLS_IDEMPOTENCY_METRICS=true",
			"POWERTOOLS_METRICS_NAMESPACE=" + namespace,
			"POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME=true",
		}})
	}
	fn, other := start(table), start(table)
	broken := start(table + "-missing")

	pay := func(em *emulator.Emulator, body string, want int) {
		t.Helper()
		if got := status(t, em, body); got != want {
			t.Errorf("%s: status %d, want %d", body, got, want)
		}
	}
	order := func(id string, amount int) string {
		return fmt.Sprintf(`{"order_id":%q,"customer":"cus_1","amount":%d,"currency":"EUR"}`, id, amount)
	}
	pay(fn, order("order-1", 1250), http.StatusCreated)             // new
	pay(fn, order("order-1", 1250), http.StatusCreated)             // replayed
	pay(fn, order("order-1", 9900), http.StatusUnprocessableEntity) // conflict
	prov.FailNext(1)
	pay(fn, order("order-2", 1250), http.StatusBadGateway) // released
	pay(fn, order("order-2", 1250), http.StatusCreated)    // new
	// invalid_event: two names that encoding/json reads as one
	pay(fn, `{"order_id":"order-3","ORDER_ID":"order-4","customer":"cus_1","amount":1,"currency":"EUR"}`, http.StatusBadRequest)
	// store_error: the function fails, or answers with a 5xx of its own
	if got := status(t, broken, order("order-5", 1250)); got != 0 && got < 500 {
		t.Errorf("payment with the table missing: status %d, want a failure", got)
	}

	// in_progress: a duplicate while the first one's charge is held.
	release := prov.Hold()
	defer release()
	done := make(chan error, 1)
	go func() {
		code, err := send(fn, order("order-6", 1250))
		if err == nil && code != http.StatusCreated {
			err = fmt.Errorf("the held payment: status %d, want 201", code)
		}
		done <- err
	}()
	// The provider delivers every request it got, the earlier ones first.
	for arrived := false; !arrived; {
		select {
		case r := <-prov.Arrived():
			arrived = r.OrderID == "order-6"
		case <-time.After(30 * time.Second):
			t.Fatal("the charge of order-6 never reached the provider")
		}
	}
	pay(other, order("order-6", 1250), http.StatusConflict)
	release()
	if err := <-done; err != nil {
		t.Error(err)
	}

	// A function's last lines may still be in the pipe when its response
	// has arrived: stop the emulators, which waits for all their output.
	for _, em := range []*emulator.Emulator{fn, other, broken} {
		em.Close()
	}
	want := map[string]int{
		"IdempotencyNew": 3, "IdempotencyReplayed": 1, "IdempotencyConflict": 1, "IdempotencyReleased": 1,
		"IdempotencyInvalidEvent": 1, "IdempotencyStoreError": 1, "IdempotencyInProgress": 1,
	}
	counts, logged := map[string]int{}, map[string]int{}
	documents := 0
	for _, out := range outputs {
		output := []byte(out.String())
		for _, doc := range emftest.Documents(output) {
			documents++
			for name, n := range check(t, doc) {
				counts[name] += n
			}
		}
		for line := range bytes.Lines(output) {
			var rec struct {
				Msg       string `json:"msg"`
				Outcome   string `json:"outcome"`
				KeyPrefix string `json:"key_prefix"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "idempotency: invocation" {
				logged[metricOf(rec.Outcome)]++
				if rec.KeyPrefix != "payments" {
					t.Errorf("outcome record with key_prefix %q, want payments: %s", rec.KeyPrefix, line)
				}
			}
		}
	}
	if documents != 9 || !maps.Equal(counts, want) {
		t.Errorf("%d documents counting %v; want 9 counting %v", documents, counts, want)
	}
	if !maps.Equal(logged, want) {
		t.Errorf("the outcome log says %v, want %v", logged, want)
	}
	if t.Failed() {
		for i, out := range outputs {
			t.Logf("function %d's output:\n%s", i, out)
		}
	}
}

// check validates one document the function wrote and returns its counts.
func check(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	if err := emftest.Validate(doc, time.Now()); err != nil {
		t.Errorf("invalid EMF document %s:\n%v", doc, err)
		return nil
	}
	var d struct {
		AWS struct {
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		FunctionName, KeyPrefix string
	}
	var members map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc, &members); err != nil {
		t.Fatal(err)
	}
	if len(d.AWS.CloudWatchMetrics) != 1 {
		t.Errorf("%s: %d directives, want 1", doc, len(d.AWS.CloudWatchMetrics))
		return nil
	}
	dir := d.AWS.CloudWatchMetrics[0]
	if dir.Namespace != namespace || len(dir.Dimensions) != 1 || !slices.Equal(dir.Dimensions[0], []string{"FunctionName", "KeyPrefix"}) ||
		d.FunctionName != "payments" || d.KeyPrefix != "payments" {
		t.Errorf("%s: want namespace %s and the dimensions FunctionName and KeyPrefix, both payments", doc, namespace)
	}
	counts := map[string]int{}
	for _, m := range dir.Metrics {
		switch {
		case m.Unit == "Count":
			if members[m.Name] != 1.0 {
				t.Errorf("%s: the count %s is %v, want 1", doc, m.Name, members[m.Name])
			}
			counts[m.Name]++
		case m.Unit != "Milliseconds" || (m.Name != "IdempotencyInvocationDuration" && m.Name != "IdempotencyHandlerDuration" && m.Name != "IdempotencyReplayAge"):
			t.Errorf("%s: unexpected metric %s in %s", doc, m.Name, m.Unit)
		}
	}
	if len(counts) != 1 {
		t.Errorf("%s: %d counts, want one outcome", doc, len(counts))
	}
	return counts
}

// metricOf is the count of an outcome: in_progress is IdempotencyInProgress.
func metricOf(outcome string) string {
	name := "Idempotency"
	for word := range strings.SplitSeq(outcome, "_") {
		if word != "" {
			name += strings.ToUpper(word[:1]) + word[1:]
		}
	}
	return name
}

// status sends a payment and returns the function's HTTP status, or 0 when
// the function failed (Lambda's error, which API Gateway answers with 500).
func status(t *testing.T, em *emulator.Emulator, body string) int {
	t.Helper()
	code, err := send(em, body)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// send is status for another goroutine than the test's, which must not
// call t.Fatal.
func send(em *emulator.Emulator, body string) (int, error) {
	payload, err := json.Marshal(events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /payments", RawPath: "/payments",
		Headers: map[string]string{"content-type": "application/json"}, Body: body,
	})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := em.Invoke(ctx, payload)
	if err != nil {
		return 0, err
	}
	var resp events.APIGatewayV2HTTPResponse
	if json.Unmarshal(raw.Body, &resp) != nil {
		return 0, nil
	}
	return resp.StatusCode, nil
}

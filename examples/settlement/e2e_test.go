package main

// End-to-end tests: the settlement function, built as Lambda runs it, under
// the Runtime Interface Emulator, against moto server through the
// fault-injecting proxy. They need .tools/bin/aws-lambda-rie and
// TEST_MOTO_ENDPOINT, which `make test` provides; without them they skip
// (and fail under CI=true).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// timeout is the function timeout: the lease of a record ends with the
// invocation's deadline, so a retry after a crash waits at most this long.
const timeout = 3 * time.Second

// The function binary is built once per test run.
var bootstrap emulator.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	bootstrap.Remove()
	os.Exit(code)
}

// world is one test's tables in moto, the proxy in front of moto, and the
// test's own copy of the function binary (so that a kill finds exactly
// this test's process).
type world struct {
	t      *testing.T
	rie    string
	db     *dynamodb.Client // direct to moto
	proxy  *faultproxy.Proxy
	store  *dynamo.Store
	table  string
	ledger string
	binary string
	killed chan struct{}
}

func newWorld(t *testing.T) *world {
	t.Helper()
	rie, err := emulator.LocateRIE(testenv.RepoRoot())
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	moto := testenv.Endpoint(t, testenv.MotoEnv)
	w := &world{t: t, rie: rie, db: testenv.NewDynamoDB(moto), killed: make(chan struct{}, 1)}
	stamp := time.Now().UnixNano()
	w.table, w.ledger = fmt.Sprintf("settlement-idem-%d", stamp), fmt.Sprintf("settlement-ledger-%d", stamp)
	ctx := context.Background()
	if err := dynamo.CreateTable(ctx, w.db, func(o *dynamo.Options) { o.TableName = w.table }); err != nil {
		t.Fatal(err)
	}
	// The test's ledger is keyed on the settlement and the time of the run
	// that wrote the movement, unlike template.yaml's, keyed on the
	// settlement alone: there the movement's attribute_not_exists condition
	// would make a second run's movement fail (or an unconditioned one
	// overwrite the first), hiding it. Here every run that commits leaves a
	// row of its own, so the rows count the effects.
	if _, err := w.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(w.ledger),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("settlement_id"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("settled_at"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("settlement_id"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("settled_at"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(w.table)})
		w.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(w.ledger)})
	})
	if w.store, err = dynamo.New(w.db, func(o *dynamo.Options) { o.TableName = w.table }); err != nil {
		t.Fatal(err)
	}
	if w.proxy, err = faultproxy.NewHTTP(moto); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.proxy.Close)
	w.binary = bootstrap.Copy(t)
	return w
}

// function is one emulator running the function, and its output.
type function struct {
	em  *emulator.Emulator
	out *lineBuffer
}

// sandbox starts the function under a new emulator, as Lambda does for a
// new execution environment.
func (w *world) sandbox() *function {
	w.t.Helper()
	env := []string{
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + w.proxy.URL(),
		"AWS_LAMBDA_FUNCTION_NAME=settlement",
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", int(timeout/time.Second)),
		"POWERTOOLS_IDEMPOTENCY_TABLE=" + w.table,
		"LEDGER_TABLE=" + w.ledger,
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH=" + eventKeyPath,
		"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH=" + validationPath,
	}
	out := &lineBuffer{}
	em := emulator.StartTest(w.t, emulator.Config{RIE: w.rie, Bootstrap: w.binary, Env: env, Output: out})
	return &function{em: em, out: out}
}

// answer is what one delivery got: a receipt, or Lambda's error.
type answer struct {
	receipt   Receipt
	raw       string
	errorType string // "" on success
}

func settlementEvent(id string, cents int64) []byte {
	detail, _ := json.Marshal(Settlement{SettlementID: id, AccountID: "acc_1", AmountCents: cents, Currency: "EUR"})
	ev, _ := json.Marshal(map[string]any{
		"version": "0", "id": "ev-" + id, "detail-type": "Settlement", "source": "payouts",
		"time": "2026-11-29T12:00:00Z", "region": "us-east-1", "resources": []string{}, "detail": json.RawMessage(detail),
	})
	return ev
}

// deliver sends the event once; safe from any goroutine.
func (f *function) deliver(id string, cents int64) (answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := f.em.Invoke(ctx, settlementEvent(id, cents))
	if err != nil {
		return answer{}, err
	}
	a := answer{raw: string(resp.Body)}
	var lambdaErr struct {
		ErrorType string `json:"errorType"`
	}
	if json.Unmarshal(resp.Body, &lambdaErr) == nil && lambdaErr.ErrorType != "" {
		a.errorType = lambdaErr.ErrorType
		return a, nil
	}
	if err := json.Unmarshal(resp.Body, &a.receipt); err != nil || a.receipt.SettlementID != id {
		return a, fmt.Errorf("delivery of %s answered %s", id, resp.Body)
	}
	return a, nil
}

func (w *world) deliver(f *function, id string, cents int64) answer {
	w.t.Helper()
	a, err := f.deliver(id, cents)
	if err != nil {
		w.t.Fatal(err)
	}
	return a
}

// settle delivers the event, from a new sandbox, until it is answered with
// something other than InProgressError, as EventBridge's retries would.
func (w *world) settle(id string, cents int64) answer {
	w.t.Helper()
	f := w.sandbox()
	start := time.Now()
	for {
		a := w.deliver(f, id, cents)
		if a.errorType != "InProgressError" {
			return a
		}
		if time.Since(start) > timeout+5*time.Second {
			w.t.Fatalf("still in progress %v after the first delivery: the lease did not end", time.Since(start))
		}
		// A retry interval: the lease ends on the wall clock, which
		// signals nothing.
		time.Sleep(250 * time.Millisecond)
	}
}

// ledgerRow is one row of the test's ledger: one committed run.
type ledgerRow struct {
	id    string
	cents int64
}

// movements returns the ledger's rows, one per run that committed.
func (w *world) movements() []ledgerRow {
	w.t.Helper()
	out, err := w.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(w.ledger), ConsistentRead: aws.Bool(true)})
	if err != nil {
		w.t.Fatal(err)
	}
	var rows []ledgerRow
	for _, item := range out.Items {
		m := ledgerRow{id: item["settlement_id"].(*types.AttributeValueMemberS).Value}
		fmt.Sscan(item["amount_cents"].(*types.AttributeValueMemberN).Value, &m.cents)
		rows = append(rows, m)
	}
	return rows
}

// wantOneMovement checks the end state: one movement for id, of cents, and
// a COMPLETE receipt whose stored response is got.
func (w *world) wantOneMovement(id string, cents int64, got answer) {
	w.t.Helper()
	if m := w.movements(); len(m) != 1 || m[0] != (ledgerRow{id, cents}) {
		w.t.Errorf("ledger %v, want one movement of %d for %s", m, cents, id)
	}
	out, err := w.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(w.table), ConsistentRead: aws.Bool(true)})
	if err != nil || len(out.Items) != 1 {
		w.t.Fatalf("idempotency table: %d items, %v; want one receipt", len(out.Items), err)
	}
	key := out.Items[0]["id"].(*types.AttributeValueMemberS).Value
	rec, err := w.store.Get(context.Background(), key)
	if err != nil {
		w.t.Fatal(err)
	}
	if rec.Status != idempotency.StatusComplete || string(rec.Response) != got.raw {
		w.t.Errorf("receipt %s %s, want COMPLETE with the answer %s", rec.Status, rec.Response, got.raw)
	}
	// And a further redelivery replays it.
	if again := w.deliver(w.sandbox(), id, cents); again.raw != got.raw {
		w.t.Errorf("replay answered %s, want %s", again.raw, got.raw)
	}
}

// kill sends SIGKILL to the function: the process running this test's
// copy of the binary.
func (w *world) kill() {
	if n := emulator.Kill(w.binary); n != 1 {
		w.t.Errorf("killed %d function processes, want 1", n)
	}
	w.killed <- struct{}{}
}

// crash delivers the event to a sandbox that the armed rule kills.
func (w *world) crash(id string, cents int64) {
	w.t.Helper()
	f := w.sandbox()
	done := make(chan answer, 1)
	go func() {
		a, _ := f.deliver(id, cents)
		done <- a
	}()
	select {
	case <-w.killed:
	case <-time.After(time.Minute):
		w.t.Fatal("the crash point was never reached")
	}
	f.em.Close()
	if a := <-done; a.receipt.SettlementID != "" {
		w.t.Fatalf("the killed invocation answered a receipt: %s", a.raw)
	}
}

// lineBuffer is the emulator's output, with the reads the tests make.
type lineBuffer struct{ emulator.Buffer }

func (b *lineBuffer) contains(s string) bool { return strings.Contains(b.String(), s) }

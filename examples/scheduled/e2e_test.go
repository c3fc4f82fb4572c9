package main

// End-to-end tests: the scheduled function, built as Lambda runs it, under
// the Runtime Interface Emulator (one emulator per execution environment),
// against moto server through internal/testing/faultproxy, which counts the
// function's DynamoDB requests, and the tests' job service. They need
// .tools/bin/aws-lambda-rie and TEST_MOTO_ENDPOINT, which `make test`
// provides; without them they skip (and fail under CI=true).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
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

// The function binary is built once per test run.
var bootstrap emulator.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	bootstrap.Remove()
	os.Exit(code)
}

// functionName is the function's name under the emulator: its records'
// keys start with it ("scheduled.tick#", "scheduled.lock#").
const functionName = "scheduled"

// world is one test's table in moto, the proxy in front of moto, the job
// service, and the test's own copy of the function binary (so that a kill
// finds exactly this test's process).
type world struct {
	t       *testing.T
	rie     string
	db      *dynamodb.Client // straight to moto
	proxy   *faultproxy.Proxy
	store   *dynamo.Store
	table   string
	jobs    *jobService
	jobsURL string
	binary  string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	rie, err := emulator.LocateRIE(testenv.RepoRoot())
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	moto := testenv.Endpoint(t, testenv.MotoEnv)
	w := &world{t: t, rie: rie, db: testenv.NewDynamoDB(moto), jobs: newJobService()}
	w.table = fmt.Sprintf("scheduled-e2e-%d", time.Now().UnixNano())
	ctx := context.Background()
	if err := dynamo.CreateTable(ctx, w.db, func(o *dynamo.Options) { o.TableName = w.table }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(w.table)}) })
	if w.store, err = dynamo.New(w.db, func(o *dynamo.Options) { o.TableName = w.table }); err != nil {
		t.Fatal(err)
	}
	if w.proxy, err = faultproxy.NewHTTP(moto); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.proxy.Close)
	srv := httptest.NewServer(w.jobs)
	t.Cleanup(srv.Close)
	w.jobsURL = srv.URL
	w.binary = bootstrap.Copy(t)
	return w
}

// function is one emulator running the function: an execution
// environment.
type function struct {
	em *emulator.Emulator
}

// sandbox starts the function under a new emulator, with the function
// timeout timeout. env adds to, or overrides, its environment.
func (w *world) sandbox(timeout time.Duration, env ...string) *function {
	w.t.Helper()
	base := []string{
		"AWS_REGION=us-east-1", // the emulator does not set it
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + w.proxy.URL(),
		"AWS_LAMBDA_FUNCTION_NAME=" + functionName,
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", int(timeout/time.Second)),
		"POWERTOOLS_IDEMPOTENCY_TABLE=" + w.table,
		"JOB_SERVICE_URL=" + w.jobsURL,
		"JOB_NAME=" + job,
	}
	// The output is logged if the test fails.
	em := emulator.StartTest(w.t, emulator.Config{RIE: w.rie, Bootstrap: w.binary, Env: append(base, env...), Output: &emulator.Buffer{}})
	return &function{em: em}
}

// warm starts each function's runtime with an event that is no tick, so
// that the invocations a test times race each other, not cold starts.
func warm(t *testing.T, fns ...*function) {
	t.Helper()
	for _, fn := range fns {
		if _, err := fn.tick(Event{Job: job}); !isFunctionError(err, "InvalidEventError") {
			t.Fatalf("warm-up: %v, want an InvalidEventError", err)
		}
	}
}

// tick sends e and returns the function's result, or its error as Lambda
// reports it (a *functionError).
func (f *function) tick(e Event) (Result, error) {
	payload, err := json.Marshal(e)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := f.em.Invoke(ctx, payload)
	if err != nil {
		return Result{}, err
	}
	var fnErr functionError
	if json.Unmarshal(resp.Body, &fnErr) == nil && fnErr.Type != "" {
		return Result{}, &fnErr
	}
	var res Result
	if err := json.Unmarshal(resp.Body, &res); err != nil || res.Status == "" {
		return Result{}, fmt.Errorf("emulator status %d, body %s", resp.Status, resp.Body)
	}
	return res, nil
}

// answer is an invocation's answer, and when it came.
type answer struct {
	res      Result
	err      error
	at       time.Time
	refusals int // for a retried tick, the InProgressErrors before it
}

// functionError is an invocation's error as Lambda reports it: Type is the
// Go type name of the error the handler returned.
type functionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

func (e *functionError) Error() string { return e.Type + ": " + e.Message }

func isFunctionError(err error, typ string) bool {
	fnErr, ok := errors.AsType[*functionError](err)
	return ok && fnErr.Type == typ
}

// record reads the record key.
func (w *world) record(key string) *idempotency.Record {
	w.t.Helper()
	rec, err := w.store.Get(context.Background(), key)
	if err != nil {
		w.t.Fatalf("Get(%s): %v", key, err)
	}
	return rec
}

// lock reads the job lock's record, or returns nil when there is none.
func (w *world) lock() *idempotency.Record {
	w.t.Helper()
	out, err := w.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(w.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, item := range out.Items {
		if id, ok := item["id"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(id.Value, functionName+".lock#") {
			return w.record(id.Value)
		}
	}
	return nil
}

// holderEnd is when the invocation holding the IN_PROGRESS record rec
// ends: the deadline it keeps, under AbandonBlock and AbandonUncertain,
// else its lease end.
func holderEnd(rec *idempotency.Record) time.Time {
	if !rec.Deadline.IsZero() {
		return rec.Deadline
	}
	return rec.LeaseEnd
}

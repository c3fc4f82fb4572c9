package main

// The end-to-end test: the orders function, built as Lambda runs it, under
// the Runtime Interface Emulator, fed from a queue in moto server by a
// stand-in for Lambda's event source mapping (eventSourceMapping), with its
// idempotency records in moto's DynamoDB. It needs .tools/bin/aws-lambda-rie
// and TEST_MOTO_ENDPOINT, which `make test` provides; without them it skips
// (and fails under CI=true).
//
// What "in flight" means here: each emulator runs one invocation at a
// time and a batch goes only to a free emulator, so at most 20 batches are
// in flight, as with MaximumConcurrency 20 on Lambda. How many actually
// overlap depends on how fast moto answers (the receives go one at a
// time); the test logs the maximum it saw.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

const (
	e2eOrders     = 947 // distinct valid orders
	e2eRepeats    = 50  // earlier orders sent again, under new message ids
	e2ePoison     = 3   // malformed bodies
	e2eInFlight   = 20  // batches in flight: emulators, as MaximumConcurrency
	e2eDownstream = 20  // calls the fulfilment service takes at once
	// The function timeout and the test queue's visibility timeout are
	// short, so that a failure comes back within seconds and the poison
	// messages reach the dead-letter queue in about a minute. The
	// visibility timeout still exceeds the function timeout, so that no
	// message is delivered again while an invocation holds it;
	// template.yaml keeps the production rule of six times the timeout
	// (the template's test checks it), which also covers Lambda's own
	// retries.
	e2eTimeout    = 15
	e2eVisibility = 20
	e2eMaxReceive = 3
	// At most this many messages wait in the queue (30 full batches, more
	// than the 20 in flight), for moto's sake: see produce.
	e2eBacklog = 300
)

func TestEndToEndBurst(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end burst: not with -short")
	}
	rie, err := emulator.LocateRIE(testenv.RepoRoot())
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	moto := testenv.Endpoint(t, testenv.MotoEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := fmt.Sprintf("orders-e2e-%d", time.Now().UnixNano())

	db := testenv.NewDynamoDB(moto)
	if err := dynamo.CreateTable(ctx, db, func(o *dynamo.Options) { o.TableName = name }); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() {
		db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	q := newTestQueues(ctx, t, moto, name)

	fake := newFakeFulfilment(e2eDownstream, 2*time.Millisecond)
	srv := httptest.NewServer(fake)
	defer srv.Close()

	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap")
	if err := emulator.Build(ctx, ".", bootstrap); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "function.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	out := &lockedWriter{w: logs}
	env := []string{
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + moto,
		"AWS_LAMBDA_FUNCTION_NAME=orders", "AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(e2eTimeout),
		"POWERTOOLS_IDEMPOTENCY_TABLE=" + name, "FULFILMENT_URL=" + srv.URL,
	}
	ems := make([]*emulator.Emulator, e2eInFlight)
	for i := range ems {
		if ems[i], err = emulator.Start(ctx, emulator.Config{RIE: rie, Bootstrap: bootstrap, Env: env, Output: out}); err != nil {
			t.Fatal(err)
		}
		defer ems[i].Close()
	}

	bodies, poison := burst()
	start := time.Now()
	esm := &eventSourceMapping{sqs: q.client, queueURL: q.url, queueARN: q.arn, deliveries: map[string]int{}, failed: map[string]int{}}
	pollCtx, stopPolling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { esm.run(pollCtx, ems) })
	wg.Go(func() {
		if err := esm.produce(pollCtx, bodies, e2eBacklog); err != nil && pollCtx.Err() == nil {
			esm.problem(err)
		}
	})
	// Done when every valid order is fulfilled and every poison message
	// dead-lettered, or at the deadline.
	var perOrder map[string]int
	dead := 0
	for {
		// The dead-letter queue is asked only once every order is
		// fulfilled: each request to moto delays the function's.
		if perOrder, _ = fake.fulfilled(); len(perOrder) == e2eOrders {
			dead = q.count(ctx, t, q.dlqURL)
		}
		if dead == e2ePoison || ctx.Err() != nil || time.Since(start) > 4*time.Minute {
			break
		}
		// moto signals no dead-lettering: poll it.
		time.Sleep(500 * time.Millisecond)
	}
	stopPolling()
	wg.Wait()
	elapsed := time.Since(start)
	perOrder, calls := fake.fulfilled()
	t.Logf("%d messages in %v: %d invocations, max %d batches in flight, %d function errors; fulfilment service: %d calls, max %d in flight, %d answered 429",
		len(bodies), elapsed.Round(time.Millisecond), esm.invocations.Load(), esm.maxInFlight.Load(), esm.functionError.Load(),
		calls, fake.maxInFlight.Load(), fake.rejected.Load())
	if err := esm.err(); err != nil {
		t.Errorf("event source mapping: %v", err)
	}

	// Every valid order fulfilled exactly once.
	for i := range e2eOrders {
		if id := orderID(i); perOrder[id] != 1 {
			t.Errorf("order %s fulfilled %d times, want once", id, perOrder[id])
		}
	}
	if len(perOrder) != e2eOrders {
		t.Errorf("%d orders fulfilled, want %d", len(perOrder), e2eOrders)
	}
	// The downstream never saw more than it takes.
	if m := fake.maxInFlight.Load(); m > e2eDownstream {
		t.Errorf("the fulfilment service saw %d calls at once, more than %d", m, e2eDownstream)
	}
	// The poison messages, and only they, are in the dead-letter queue,
	// after maxReceiveCount deliveries each.
	deadBodies := q.drain(ctx, t, q.dlqURL)
	slices.Sort(deadBodies)
	slices.Sort(poison)
	if !slices.Equal(deadBodies, poison) {
		t.Errorf("dead-letter queue holds %q, want the poison messages %q", deadBodies, poison)
	}
	esm.mu.Lock()
	for id, n := range esm.failed {
		if n == e2eMaxReceive && esm.deliveries[id] != e2eMaxReceive {
			t.Errorf("message %s failed %d times in %d deliveries", id, n, esm.deliveries[id])
		}
	}
	poisonDeliveries := 0
	for id, n := range esm.deliveries {
		if esm.failed[id] == n && n == e2eMaxReceive {
			poisonDeliveries++
		}
	}
	esm.mu.Unlock()
	if poisonDeliveries != e2ePoison {
		t.Errorf("%d messages failed on each of %d deliveries, want the %d poison messages", poisonDeliveries, e2eMaxReceive, e2ePoison)
	}
	// Nothing lost: fulfilled + dead-lettered = distinct messages sent, and
	// the queue is empty.
	if got, want := len(perOrder)+len(deadBodies), e2eOrders+e2ePoison; got != want {
		t.Errorf("fulfilled %d + dead-lettered %d = %d, want %d distinct messages", len(perOrder), len(deadBodies), got, want)
	}
	if left := q.count(ctx, t, q.url); left != 0 {
		t.Errorf("%d messages left in the queue", left)
	}
	if t.Failed() {
		tail, _ := os.ReadFile(logs.Name())
		t.Logf("function output (last 8 KiB):\n%s", tail[max(0, len(tail)-8<<10):])
	}
}

func orderID(i int) string { return fmt.Sprintf("o-%04d", i) }

// burst returns the 1,000 message bodies in sending order (a fixed
// shuffle), and the poison ones.
func burst() (bodies, poison []string) {
	for i := range e2eOrders {
		bodies = append(bodies, orderBody(orderID(i), int64(100+i)))
	}
	rng := rand.New(rand.NewPCG(5, 2026))
	rng.Shuffle(len(bodies), func(i, j int) { bodies[i], bodies[j] = bodies[j], bodies[i] })
	// Repeats come after their first copy, some close behind (same or next
	// batch, so that twins meet in flight), some far.
	for r := range e2eRepeats {
		first := r * (e2eOrders / e2eRepeats)
		at := min(len(bodies), first+1+rng.IntN(1+r*10))
		bodies = slices.Insert(bodies, at, bodies[first])
	}
	poison = []string{`{"order_id": "o-9999", "amount": `, `<order id="o-9998"/>`, `{"order_id":"o-9997","customer":"c","amount":-5,"currency":"EUR"}`}
	for k, p := range poison {
		bodies = slices.Insert(bodies, (k+1)*len(bodies)/4, p)
	}
	return bodies, poison
}

// testQueues is the orders queue and its dead-letter queue in moto.
type testQueues struct {
	client          *sqs.Client
	url, arn        string
	dlqURL, dlqName string
}

func newTestQueues(ctx context.Context, t *testing.T, endpoint, name string) *testQueues {
	t.Helper()
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		// No retries: a retried receive would hide a failure that moto
		// may already have counted as a delivery.
		Retryer: aws.NopRetryer{},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
		}),
	})
	q := &testQueues{client: client, dlqName: name + "-dlq"}
	dlq, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.dlqName)})
	if err != nil {
		testenv.Unavailable(t, "moto server's SQS: %v", err)
	}
	q.dlqURL = aws.ToString(dlq.QueueUrl)
	dlqARN := q.attr(ctx, t, q.dlqURL, types.QueueAttributeNameQueueArn)
	redrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": dlqARN, "maxReceiveCount": strconv.Itoa(e2eMaxReceive)})
	main, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		"VisibilityTimeout": strconv.Itoa(e2eVisibility),
		"RedrivePolicy":     string(redrive),
	}})
	if err != nil {
		t.Fatal(err)
	}
	q.url = aws.ToString(main.QueueUrl)
	q.arn = q.attr(ctx, t, q.url, types.QueueAttributeNameQueueArn)
	t.Cleanup(func() {
		client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(q.url)})
		client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(q.dlqURL)})
	})
	return q
}

func (q *testQueues) attr(ctx context.Context, t *testing.T, url string, name types.QueueAttributeName) string {
	t.Helper()
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{name}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes[string(name)]
}

// count is the number of messages in the queue, visible or not.
func (q *testQueues) count(ctx context.Context, t *testing.T, url string) int {
	t.Helper()
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	if err != nil {
		t.Fatal(err)
	}
	visible, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	hidden, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible + hidden
}

// drain receives every message of the queue and returns the bodies.
func (q *testQueues) drain(ctx context.Context, t *testing.T, url string) []string {
	t.Helper()
	var bodies []string
	for {
		out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return bodies
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
	}
}

// lockedWriter serialises the emulators' output into one file.
type lockedWriter struct {
	mu sync.Mutex
	w  *os.File
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

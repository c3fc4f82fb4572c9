package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// queues is a source queue and its dead-letter queue on moto: a message
// received twice without being deleted moves to the DLQ at its next
// receive.
type queues struct {
	sqs      *sqs.Client
	src, dlq string // URLs
	dlqArn   string
}

func newQueues(t *testing.T, endpoint string, fifo bool) *queues {
	t.Helper()
	q := &queues{sqs: sqs.NewFromConfig(awsConfig(endpoint))}
	name := fmt.Sprintf("redrive-%d", time.Now().UnixNano())
	attrs := map[string]string{}
	suffix := ""
	if fifo {
		attrs["FifoQueue"] = "true"
		suffix = ".fifo"
	}
	q.dlq = q.create(t, name+"-dlq"+suffix, attrs)
	q.dlqArn = q.arn(t, q.dlq)
	src := map[string]string{
		"VisibilityTimeout": "1",
		"RedrivePolicy":     `{"deadLetterTargetArn":"` + q.dlqArn + `","maxReceiveCount":1}`,
	}
	for k, v := range attrs {
		src[k] = v
	}
	q.src = q.create(t, name+suffix, src)
	return q
}

func (q *queues) create(t *testing.T, name string, attrs map[string]string) string {
	t.Helper()
	out, err := q.sqs.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })
	return aws.ToString(out.QueueUrl)
}

func (q *queues) arn(t *testing.T, url string) string {
	t.Helper()
	out, err := q.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes["QueueArn"]
}

// send sends bodies to the queue url, each with a message attribute
// "n", its index; in a FIFO queue, in group "g".
func (q *queues) send(t *testing.T, url string, bodies ...string) {
	t.Helper()
	for i, body := range bodies {
		in := &sqs.SendMessageInput{
			QueueUrl:          aws.String(url),
			MessageBody:       aws.String(body),
			MessageAttributes: map[string]types.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String(strconv.Itoa(i))}},
		}
		if strings.HasSuffix(url, ".fifo") {
			in.MessageGroupId, in.MessageDeduplicationId = aws.String("g"), aws.String(fmt.Sprintf("%d-%d", time.Now().UnixNano(), i))
		}
		if _, err := q.sqs.SendMessage(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
}

// drain receives every message of url, deleting each, and returns them.
func (q *queues) drain(t *testing.T, url string) []types.Message {
	t.Helper()
	var all []types.Message
	for {
		out, err := q.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 0,
			MessageAttributeNames:       []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		for _, m := range out.Messages {
			if _, err := q.sqs.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, out.Messages...)
	}
}

func (q *queues) depth(t *testing.T, url string) int {
	t.Helper()
	out, err := q.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	return n
}

func bodies(msgs []types.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, aws.ToString(m.Body))
	}
	slices.Sort(out)
	return out
}

func numbered(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`{"order_id":"o-%02d"}`, i))
	}
	return out
}

func TestRedriveDryRun(t *testing.T) {
	t.Parallel()
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	q := newQueues(t, endpoint, false)
	q.send(t, q.dlq, numbered(4)...)
	h := &harness{endpoint: endpoint}
	r := h.run(t, "redrive", "--dlq", q.dlq, "--dry-run", "--sample", "2").want(t, exitOK)
	wantContains(t, r, "about 4 messages to move", "would move them to "+q.src+", their source", "sample of 2:", `body {"order_id":"o-0`, "attributes n", "nothing moved (--dry-run)")
	if n := q.depth(t, q.dlq); n != 4 {
		t.Errorf("after a dry run, the DLQ holds %d messages, want 4", n)
	}
	if n := q.depth(t, q.src); n != 0 {
		t.Errorf("after a dry run, the queue holds %d messages, want 0", n)
	}
}

func TestRedriveCopy(t *testing.T) {
	t.Parallel()
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprintf("fifo=%v", fifo), func(t *testing.T) {
			q := newQueues(t, endpoint, fifo)
			want := numbered(23)
			q.send(t, q.dlq, want...)
			h := &harness{endpoint: endpoint}
			// The DLQ by name.
			name := q.dlq[strings.LastIndex(q.dlq, "/")+1:]
			r := h.run(t, "redrive", "--dlq", name, "--method", "copy", "--rate", "0").want(t, exitOK)
			wantContains(t, r, "moved 23 messages from "+q.dlq+" to "+q.src+" by receive, send, delete")
			moved := q.drain(t, q.src)
			if got := bodies(moved); !slices.Equal(got, want) {
				t.Errorf("the queue got %v, want %v", got, want)
			}
			for _, m := range moved {
				if a, ok := m.MessageAttributes["n"]; !ok || aws.ToString(a.DataType) != "Number" {
					t.Errorf("message %s lost its attribute n: %v", aws.ToString(m.Body), m.MessageAttributes)
				}
				if g := m.Attributes["MessageGroupId"]; fifo && g != "g" {
					t.Errorf("message %s is in group %q, want g", aws.ToString(m.Body), g)
				}
			}
			if n := q.depth(t, q.dlq); n != 0 {
				t.Errorf("the DLQ still holds %d messages", n)
			}
		})
	}
}

func TestRedriveLimits(t *testing.T) {
	t.Parallel()
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	q := newQueues(t, endpoint, false)
	q.send(t, q.dlq, numbered(7)...)
	h := &harness{endpoint: endpoint}

	// --max: three of seven.
	wantContains(t, h.run(t, "redrive", "--dlq", q.dlq, "--max", "3").want(t, exitOK), "moved 3 messages")
	if n := len(q.drain(t, q.src)); n != 3 {
		t.Errorf("--max 3 moved %d", n)
	}

	// --rate: the first batch of ten goes at once, the rest waits until
	// those ten have had their second.
	q.send(t, q.dlq, numbered(8)...)
	start := time.Now()
	wantContains(t, h.run(t, "redrive", "--dlq", q.dlq, "--method", "copy", "--rate", "10").want(t, exitOK), "moved 12 messages")
	if d := time.Since(start); d < time.Second {
		t.Errorf("12 messages at 10 a second took %s, want at least 1s", d)
	}
	q.drain(t, q.src)

	// A DLQ of two queues: copying needs --to.
	other := q.create(t, fmt.Sprintf("redrive-other-%d", time.Now().UnixNano()), map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + q.dlqArn + `","maxReceiveCount":1}`,
	})
	q.send(t, q.dlq, "x")
	r := h.run(t, "redrive", "--dlq", q.dlq, "--method", "copy").want(t, exitFailed)
	if !strings.Contains(r.stderr, "give --to") {
		t.Errorf("redrive of a DLQ of two queues: %v", r)
	}
	h.run(t, "redrive", "--dlq", q.dlq, "--method", "copy", "--to", other).want(t, exitOK)
	if got := bodies(q.drain(t, other)); !slices.Equal(got, []string{"x"}) {
		t.Errorf("--to got %v", got)
	}

	for name, args := range map[string][]string{
		"no dlq":       {"redrive"},
		"bad method":   {"redrive", "--dlq", q.dlq, "--method", "teleport"},
		"task, max":    {"redrive", "--dlq", q.dlq, "--method", "task", "--max", "1"},
		"task, rate":   {"redrive", "--dlq", q.dlq, "--method", "task", "--rate", "501"},
		"negative max": {"redrive", "--dlq", q.dlq, "--max", "-1"},
	} {
		if r := h.run(t, args...); r.status != exitUsage {
			t.Errorf("%s: want exit %d, got %v", name, exitUsage, r)
		}
	}
	h.run(t, "redrive", "--dlq", "no-such-queue").want(t, exitFailed)
}

// TestRedriveFallsBack: moto does not offer StartMessageMoveTask; auto
// says so and copies.
func TestRedriveFallsBack(t *testing.T) {
	t.Parallel()
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	q := newQueues(t, endpoint, false)
	q.send(t, q.dlq, numbered(3)...)
	r := (&harness{endpoint: endpoint}).run(t, "redrive", "--dlq", q.dlqArn).want(t, exitOK)
	if !strings.Contains(r.stderr, "StartMessageMoveTask is not available") {
		t.Errorf("no word of the fallback: %v", r)
	}
	wantContains(t, r, "moved 3 messages")
	if got := bodies(q.drain(t, q.src)); !slices.Equal(got, numbered(3)) {
		t.Errorf("the queue got %v", got)
	}
}

// TestRedriveIsIdempotent: a dead-letter queue that holds messages whose
// orders were fulfilled (their batches failed after the effect, so they
// came back until SQS set them aside), and messages that never were. A
// consumer that is idempotent over the dynamo store drains the queue
// after each redrive. Redriven once, twice (as after a crash between
// send and delete, which leaves a copy in both queues), every order is
// fulfilled exactly once.
func TestRedriveIsIdempotent(t *testing.T) {
	t.Parallel()
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	q := newQueues(t, endpoint, false)
	table, client := newTable(t, endpoint)
	store, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = table })
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	effects := map[string]int{}
	type order struct {
		OrderID string `json:"order_id"`
	}
	fulfil := idempotency.WrapFunc("orders.fulfil", store, func(_ context.Context, o order) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		effects[o.OrderID]++
		return "f-" + o.OrderID, nil
	}, idempotency.WithEventKey("order_id"), idempotency.WithLogger(discard))
	// consume receives the queue until it is empty, fulfils each order,
	// and deletes its message unless lose says its batch failed.
	consume := func(lose func(order) bool) {
		t.Helper()
		for empty := 0; empty < 2; {
			out, err := q.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.src), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) == 0 {
				empty++
				continue
			}
			empty = 0
			for _, m := range out.Messages {
				var o order
				if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &o); err != nil {
					t.Fatal(err)
				}
				if _, err := fulfil(t.Context(), o); err != nil {
					t.Fatal(err)
				}
				if lose != nil && lose(o) {
					continue
				}
				q.sqs.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(q.src), ReceiptHandle: m.ReceiptHandle})
			}
		}
	}

	orders := numbered(5)
	q.send(t, q.src, orders...)
	// o-00..o-02 are fulfilled, but their deletes are lost: they come
	// back after the visibility timeout (1 s), and their next receive
	// moves them to the DLQ (maxReceiveCount 1).
	consume(func(o order) bool { return o.OrderID <= "o-02" })
	time.Sleep(1500 * time.Millisecond) // moto's visibility timeout runs on the wall clock
	consume(nil)
	// And two orders that failed elsewhere, never fulfilled.
	q.send(t, q.dlq, `{"order_id":"o-05"}`, `{"order_id":"o-06"}`)
	if n := q.depth(t, q.dlq); n != 5 {
		t.Fatalf("the DLQ holds %d messages, want the 3 fulfilled and the 2 failed", n)
	}

	h := &harness{endpoint: endpoint}
	wantContains(t, h.run(t, "redrive", "--dlq", q.dlq, "--method", "copy", "--rate", "0").want(t, exitOK), "moved 5 messages")
	consume(nil)
	// Safe to run twice: nothing left, nothing moved.
	wantContains(t, h.run(t, "redrive", "--dlq", q.dlq, "--method", "copy", "--rate", "0").want(t, exitOK), "moved 0 messages")
	// A redrive that sent every message but crashed before deleting them
	// leaves them in the DLQ: the next run moves them again.
	q.send(t, q.dlq, append(orders, `{"order_id":"o-05"}`, `{"order_id":"o-06"}`)...)
	wantContains(t, h.run(t, "redrive", "--dlq", q.dlq, "--method", "copy", "--rate", "0").want(t, exitOK), "moved 7 messages")
	consume(nil)

	mu.Lock()
	defer mu.Unlock()
	if len(effects) != 7 {
		t.Errorf("%d orders fulfilled, want 7: %v", len(effects), effects)
	}
	for id, n := range effects {
		if n != 1 {
			t.Errorf("order %s fulfilled %d times", id, n)
		}
	}
}

// TestEndpointFromEnvironment: the command's own AWS configuration is the
// SDK's default, which takes the endpoint from AWS_ENDPOINT_URL.
func TestEndpointFromEnvironment(t *testing.T) {
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	table, _ := newTable(t, endpoint)
	q := newQueues(t, endpoint, false)
	for name, value := range map[string]string{
		"AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(name, value)
	}
	var stdout, stderr bytes.Buffer
	c := &cli{
		stdout: &stdout, stderr: &stderr, environ: func() []string { return nil }, now: time.Now,
		awsConfig: func(ctx context.Context) (aws.Config, error) { return config.LoadDefaultConfig(ctx) },
	}
	if status := c.run(t.Context(), []string{"list", "--table", table}); status != exitOK {
		t.Errorf("list: exit %d: %s", status, stderr.String())
	}
	if status := c.run(t.Context(), []string{"redrive", "--dlq", q.dlq, "--dry-run"}); status != exitOK {
		t.Errorf("redrive: exit %d: %s", status, stderr.String())
	}
}

// fakeTasks is an SQS that offers StartMessageMoveTask, which moto does
// not: its task runs for two polls, then ends with status.
type fakeTasks struct {
	queueAPI
	status    string
	start     *sqs.StartMessageMoveTaskInput
	startErr  error
	polls     int
	cancelled bool
}

func (f *fakeTasks) StartMessageMoveTask(_ context.Context, in *sqs.StartMessageMoveTaskInput, _ ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	if f.startErr != nil {
		return nil, f.startErr
	}
	f.start = in
	return &sqs.StartMessageMoveTaskOutput{TaskHandle: aws.String("handle")}, nil
}

func (f *fakeTasks) ListMessageMoveTasks(context.Context, *sqs.ListMessageMoveTasksInput, ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	f.polls++
	e := types.ListMessageMoveTasksResultEntry{Status: aws.String("RUNNING"), ApproximateNumberOfMessagesMoved: int64(5 * f.polls), ApproximateNumberOfMessagesToMove: aws.Int64(12)}
	if f.polls > 2 {
		e = types.ListMessageMoveTasksResultEntry{Status: aws.String(f.status), ApproximateNumberOfMessagesMoved: 12, FailureReason: aws.String("AccessDenied")}
	}
	return &sqs.ListMessageMoveTasksOutput{Results: []types.ListMessageMoveTasksResultEntry{e}}, nil
}

func (f *fakeTasks) CancelMessageMoveTask(context.Context, *sqs.CancelMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.CancelMessageMoveTaskOutput, error) {
	f.cancelled = true
	return &sqs.CancelMessageMoveTaskOutput{}, nil
}

// ReceiveMessage finds the DLQ empty, for the fallback to copying.
func (f *fakeTasks) ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	return &sqs.ReceiveMessageOutput{}, nil
}

func TestRedriveTask(t *testing.T) {
	t.Parallel()
	newRedrive := func(f *fakeTasks) (*redrive, *bytes.Buffer, *bytes.Buffer) {
		var out, errOut bytes.Buffer
		return &redrive{
			sqs: f, out: &out, err: &errOut, terminal: true, now: time.Now, pollEvery: time.Millisecond,
			dlq: queue{url: "https://sqs/dlq", arn: "arn:aws:sqs:r:1:dlq"}, to: queue{url: "https://sqs/q", arn: "arn:aws:sqs:r:1:q"}, rate: 50,
		}, &out, &errOut
	}

	f := &fakeTasks{status: "COMPLETED"}
	r, out, errOut := newRedrive(f)
	if err := r.move(t.Context(), methodAuto); err != nil {
		t.Fatal(err)
	}
	if aws.ToString(f.start.SourceArn) != "arn:aws:sqs:r:1:dlq" || aws.ToString(f.start.DestinationArn) != "arn:aws:sqs:r:1:q" || aws.ToInt32(f.start.MaxNumberOfMessagesPerSecond) != 50 {
		t.Errorf("StartMessageMoveTask(%+v)", f.start)
	}
	if !strings.Contains(out.String(), "moved 12 messages from https://sqs/dlq to https://sqs/q by a move task") || !strings.Contains(errOut.String(), "moved about 10 of 12 messages") {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}

	f = &fakeTasks{status: "FAILED"}
	r, _, _ = newRedrive(f)
	if err := r.move(t.Context(), methodTask); err == nil || !strings.Contains(err.Error(), "FAILED after moving 12 messages: AccessDenied") {
		t.Errorf("a failed task: %v", err)
	}

	f = &fakeTasks{status: "COMPLETED"}
	r, _, _ = newRedrive(f)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.task(ctx); err == nil || !f.cancelled {
		t.Errorf("an interrupted task: %v, cancelled %v", err, f.cancelled)
	}

	// A task that cannot start: task fails, auto copies.
	f = &fakeTasks{startErr: errors.New("UnsupportedOperation")}
	r, out, errOut = newRedrive(f)
	if err := r.move(t.Context(), methodTask); err == nil {
		t.Error("--method task went on without a task")
	}
	if err := r.move(t.Context(), methodAuto); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "StartMessageMoveTask is not available: UnsupportedOperation") || !strings.Contains(out.String(), "moved 0 messages") {
		t.Errorf("fallback: stdout %q, stderr %q", out, errOut)
	}
}

// TestRedriveDryRunAsTheMove: a dry run answers as the move would: for a
// queue that is no queue's dead-letter queue, without --to, both refuse
// (exit 1), with the same reason; and a body that needs escapes is shown
// quoted.
func TestRedriveDryRunAsTheMove(t *testing.T) {
	t.Parallel()
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	q := newQueues(t, endpoint, false)
	lone := q.create(t, fmt.Sprintf("lone-%d", time.Now().UnixNano()), nil)
	q.send(t, lone, `{"order_id":"o-1"}`)
	h := &harness{endpoint: endpoint}
	dry := h.run(t, "redrive", "--dlq", lone, "--dry-run").want(t, exitFailed)
	move := h.run(t, "redrive", "--dlq", lone).want(t, exitFailed)
	const reason = "no queue has "
	if !strings.Contains(dry.stderr, reason) || !strings.Contains(move.stderr, reason) {
		t.Errorf("dry run: %v\nmove: %v", dry, move)
	}
	if n := q.depth(t, lone); n != 1 {
		t.Errorf("the queue holds %d messages, want 1", n)
	}
	h.run(t, "redrive", "--dlq", lone, "--to", q.src, "--dry-run").want(t, exitOK)

	q.send(t, q.dlq, "{\"note\":\"\x1b[2Jcleared\"}")
	r := h.run(t, "redrive", "--dlq", q.dlq, "--dry-run").want(t, exitOK)
	wantContains(t, r, `body "{\"note\":\"\x1b[2Jcleared\"}"`)
}

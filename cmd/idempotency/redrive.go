package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

const redriveAbout = `Moves the messages of a dead-letter queue back to the queue they came
from, after the fix that makes them succeed: with SQS's StartMessageMoveTask
where the service offers it, otherwise by receiving each message, sending
its body and attributes to the queue, and deleting it from the dead-letter
queue. --dry-run counts the messages and shows a sample first.

It is safe to run twice, or to stop and run again: the consumer is
idempotent, so a message moved twice (a crash between its send and its
delete) or one that was processed before it landed in the dead-letter
queue replays its stored response instead of running its effect again,
as long as its record has not expired. A message older than the
function's record expiry runs again: the sample shows the messages' ages.

Exit status: 0 when every message was moved (or the dry run ended), 1 when
some were not, 2 on a bad command line.
`

// Ways to move messages, for -method.
const (
	methodAuto = "auto"
	methodTask = "task" // StartMessageMoveTask
	methodCopy = "copy" // receive, send, delete
)

// maxTaskRate is StartMessageMoveTask's highest MaxNumberOfMessagesPerSecond.
const maxTaskRate = 500

// queueAPI is the part of the SQS API redrive uses; *sqs.Client has it.
type queueAPI interface {
	GetQueueUrl(ctx context.Context, params *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	GetQueueAttributes(ctx context.Context, params *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	ListDeadLetterSourceQueues(ctx context.Context, params *sqs.ListDeadLetterSourceQueuesInput, optFns ...func(*sqs.Options)) (*sqs.ListDeadLetterSourceQueuesOutput, error)
	StartMessageMoveTask(ctx context.Context, params *sqs.StartMessageMoveTaskInput, optFns ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
	ListMessageMoveTasks(ctx context.Context, params *sqs.ListMessageMoveTasksInput, optFns ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error)
	CancelMessageMoveTask(ctx context.Context, params *sqs.CancelMessageMoveTaskInput, optFns ...func(*sqs.Options)) (*sqs.CancelMessageMoveTaskOutput, error)
	ReceiveMessage(ctx context.Context, params *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, params *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	SendMessageBatch(ctx context.Context, params *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	DeleteMessageBatch(ctx context.Context, params *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

var _ queueAPI = (*sqs.Client)(nil)

// queue is an SQS queue, by URL and ARN.
type queue struct{ url, arn string }

func (q queue) fifo() bool { return strings.HasSuffix(q.url, ".fifo") }

// redrive is one run of the redrive command.
type redrive struct {
	sqs       queueAPI
	out, err  io.Writer
	terminal  bool
	now       func() time.Time
	pollEvery time.Duration

	dlq, to queue // to.url is "" when the messages go back to their sources
	rate    int   // messages per second, 0 for no limit
	max     int   // messages to move, 0 for all
}

func (c *cli) redrive(ctx context.Context, args []string) int {
	fs := c.flags("redrive", "--dlq QUEUE [flags]", redriveAbout)
	dlq := fs.String("dlq", "", "the dead-letter `queue`: URL, ARN or name (required)")
	to := fs.String("to", "", "the `queue` to move the messages to (default: the one queue whose dead-letter queue --dlq is)")
	dryRun := fs.Bool("dry-run", false, "count the messages and show a sample; move nothing")
	sample := fs.Int("sample", 3, "how many messages the dry run shows")
	rate := fs.Int("rate", 10, "move at most this many messages a `second` (0: as fast as SQS goes; a move task takes at most 500)")
	maxMessages := fs.Int("max", 0, "move at most this many messages (0: all; moves by receive, send, delete)")
	method := fs.String("method", methodAuto, "how to move: task (StartMessageMoveTask), copy (receive, send, delete), or auto (a task where the service offers it, else copy)")
	if status, ok := c.parse(fs, args, 0, 0); !ok {
		return status
	}
	switch {
	case *dlq == "":
		return c.usageError("redrive", "--dlq is required")
	case *rate < 0 || *maxMessages < 0 || *sample < 0:
		return c.usageError("redrive", "--rate, --max and --sample cannot be negative")
	case *method != methodAuto && *method != methodTask && *method != methodCopy:
		return c.usageError("redrive", "--method %q: want auto, task or copy", *method)
	case *method == methodTask && *rate > maxTaskRate:
		return c.usageError("redrive", "--rate %d: a move task takes at most %d", *rate, maxTaskRate)
	case *method == methodTask && *maxMessages > 0:
		return c.usageError("redrive", "--max needs --method copy: a move task moves every message")
	}
	cfg, err := c.awsConfig(ctx)
	if err != nil {
		return c.fail("redrive", fmt.Errorf("AWS configuration: %w", err))
	}
	client := sqs.NewFromConfig(cfg)
	where, err := awsPlace("dead-letter queue "+printable(*dlq), client.Options().Region, client.Options().BaseEndpoint)
	if err != nil {
		return c.fail("redrive", err)
	}
	r := &redrive{
		sqs: client, out: c.stdout, err: c.stderr, terminal: c.terminal,
		now: c.now, pollEvery: c.pollEvery, rate: *rate, max: *maxMessages,
	}
	if err := r.run(ctx, *dlq, *to, *dryRun, *sample, *method); err != nil {
		return c.fail("redrive", fmt.Errorf("%s: %w", where, err))
	}
	return exitOK
}

// run finds the queues, then moves the messages, or with dryRun shows
// what it would move.
func (r *redrive) run(ctx context.Context, dlq, to string, dryRun bool, sample int, method string) (err error) {
	if r.dlq, err = r.queue(ctx, dlq); err != nil {
		return err
	}
	if to != "" {
		if r.to, err = r.queue(ctx, to); err != nil {
			return err
		}
	}
	if dryRun {
		return r.dryRun(ctx, sample)
	}
	return r.move(ctx, method)
}

// queue finds the queue s names: a URL, an ARN or a name.
func (r *redrive) queue(ctx context.Context, s string) (queue, error) {
	url := s
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		in := &sqs.GetQueueUrlInput{QueueName: aws.String(s)}
		// arn:aws:sqs:region:account:name
		if parts := strings.Split(s, ":"); len(parts) == 6 && parts[0] == "arn" && parts[2] == "sqs" {
			in = &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])}
		}
		out, err := r.sqs.GetQueueUrl(ctx, in)
		if err != nil {
			return queue{}, fmt.Errorf("queue %s: %w", s, err)
		}
		url = aws.ToString(out.QueueUrl)
	}
	out, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return queue{}, fmt.Errorf("queue %s: %w", s, err)
	}
	return queue{url: url, arn: out.Attributes[string(types.QueueAttributeNameQueueArn)]}, nil
}

// sources returns the queues whose dead-letter queue is the DLQ.
func (r *redrive) sources(ctx context.Context) ([]string, error) {
	var urls []string
	p := sqs.NewListDeadLetterSourceQueuesPaginator(r.sqs, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(r.dlq.url)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("the source queues of %s: %w", r.dlq.url, err)
		}
		urls = append(urls, out.QueueUrls...)
	}
	return urls, nil
}

// destination returns the queue the messages go to when they are copied:
// --to, else the DLQ's one source queue.
func (r *redrive) destination(ctx context.Context) (queue, error) {
	if r.to.url != "" {
		return r.to, nil
	}
	urls, err := r.sources(ctx)
	if err != nil {
		return queue{}, err
	}
	switch len(urls) {
	case 0:
		return queue{}, r.noSource()
	case 1:
		return r.queue(ctx, urls[0])
	}
	return queue{}, fmt.Errorf("%s is the dead-letter queue of %d queues (%s), and a copied message does not say which it came from: give --to", r.dlq.url, len(urls), strings.Join(urls, ", "))
}

// noSource is the error of a move to the source of a queue that is no
// queue's dead-letter queue.
func (r *redrive) noSource() error {
	return fmt.Errorf("no queue has %s as its dead-letter queue: give --to", r.dlq.url)
}

// depth returns the DLQ's approximate counts of messages: visible, in
// flight, delayed.
func (r *redrive) depth(ctx context.Context) (visible, inFlight, delayed int, err error) {
	out, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(r.dlq.url),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("the depth of %s: %w", r.dlq.url, err)
	}
	n := func(name types.QueueAttributeName) int {
		v, _ := strconv.Atoi(out.Attributes[string(name)])
		return v
	}
	return n(types.QueueAttributeNameApproximateNumberOfMessages),
		n(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible),
		n(types.QueueAttributeNameApproximateNumberOfMessagesDelayed), nil
}

// sampleVisibility hides the dry run's sample while it is shown; it is
// made visible again right after.
const sampleVisibility = 10 // seconds

// dryRun counts the DLQ's messages and shows a sample of them, moving
// nothing. Receiving the sample raises their receive counts, and hides
// them for a moment.
func (r *redrive) dryRun(ctx context.Context, sample int) error {
	visible, inFlight, delayed, err := r.depth(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "dead-letter queue %s\n  about %s to move (%d more in flight, %d delayed)\n", escape(r.dlq.url), count(visible, "message", "messages"), inFlight, delayed)
	sources, err := r.sources(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "  the dead-letter queue of: %s\n", escape(orNone(strings.Join(sources, ", "))))
	switch {
	case r.to.url == "" && len(sources) == 0:
		// As the move would: it has nowhere to go.
		return r.noSource()
	case r.to.url != "":
		fmt.Fprintf(r.out, "would move them to %s\n", escape(r.to.url))
	case len(sources) == 1:
		fmt.Fprintf(r.out, "would move them to %s, their source\n", escape(sources[0]))
	default:
		fmt.Fprintln(r.out, "would move each to its source queue, by a move task only (give --to to copy)")
	}
	if r.rate > 0 && visible > 0 {
		fmt.Fprintf(r.out, "at %d messages a second: about %s\n", r.rate, (time.Duration(visible) * time.Second / time.Duration(r.rate)).Round(time.Second))
	}
	if sample > 0 {
		msgs, err := r.receive(ctx, min(sample, 10), sampleVisibility)
		if err != nil {
			return err
		}
		fmt.Fprintf(r.out, "sample of %d:\n", len(msgs))
		for i, m := range msgs {
			r.describe(i+1, m)
		}
		if err := r.release(ctx, msgs); err != nil {
			fmt.Fprintf(r.err, "idempotency redrive: the sample stays hidden for %d s: %v\n", sampleVisibility, escape(err.Error()))
		}
	}
	fmt.Fprintln(r.out, "nothing moved (--dry-run)")
	return nil
}

// describe writes the sample message m, numbered i.
func (r *redrive) describe(i int, m types.Message) {
	line := fmt.Sprintf("  %d. message %s", i, printable(aws.ToString(m.MessageId)))
	if ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil {
		line += fmt.Sprintf(", sent %s ago", r.now().Sub(time.UnixMilli(ms)).Round(time.Second))
	}
	if n, err := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)]); err == nil {
		line += ", received " + count(n, "time", "times")
	}
	fmt.Fprintln(r.out, line)
	body := aws.ToString(m.Body)
	if len(body) > 200 {
		body = body[:200] + "..."
	}
	fmt.Fprintf(r.out, "     body %s\n", document(body))
	if len(m.MessageAttributes) > 0 {
		names := make([]string, 0, len(m.MessageAttributes))
		for name := range m.MessageAttributes {
			names = append(names, printable(name))
		}
		fmt.Fprintf(r.out, "     attributes %s\n", strings.Join(names, ", "))
	}
}

// release makes msgs, received from the DLQ, visible there again at once.
// (A receive cannot ask for a visibility timeout of 0: the SDK leaves a
// zero out, and the queue's own applies.)
func (r *redrive) release(ctx context.Context, msgs []types.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}
	}
	out, err := r.sqs.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(r.dlq.url), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("%d of %d messages: %s", len(out.Failed), len(msgs), aws.ToString(out.Failed[0].Message))
	}
	return err
}

// receive receives up to n messages of the DLQ, with all their
// attributes, hidden for visibility seconds (at least 1).
func (r *redrive) receive(ctx context.Context, n int, visibility int32) ([]types.Message, error) {
	out, err := r.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(r.dlq.url),
		MaxNumberOfMessages:         int32(n),
		WaitTimeSeconds:             1,
		VisibilityTimeout:           visibility,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", r.dlq.url, err)
	}
	return out.Messages, nil
}

// move moves the messages by method, and writes what it moved.
func (r *redrive) move(ctx context.Context, method string) error {
	if method == methodTask || (method == methodAuto && r.max == 0 && r.rate <= maxTaskRate) {
		err := r.task(ctx)
		var unavailable *taskUnavailableError
		if method == methodTask || !errors.As(err, &unavailable) {
			return err
		}
		fmt.Fprintf(r.err, "idempotency redrive: %s; moving by receive, send, delete instead\n", escape(err.Error()))
	}
	return r.copyMessages(ctx)
}

// taskUnavailableError is a StartMessageMoveTask that the service refused
// or does not offer: auto falls back to copying.
type taskUnavailableError struct{ err error }

func (e *taskUnavailableError) Error() string {
	return "StartMessageMoveTask is not available: " + e.err.Error()
}

func (e *taskUnavailableError) Unwrap() error { return e.err }

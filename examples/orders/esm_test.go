package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gopowertools/lambda/examples/internal/emulator"
)

// eventSourceMapping plays the part of Lambda's SQS event source mapping
// with ReportBatchItemFailures: it receives up to 10 messages, invokes the
// function with them, deletes the ones that succeeded and leaves the
// failures in the queue, to come back after the visibility timeout. An
// emulator runs one invocation at a time, and a batch goes only to a free
// one, so the number of emulators bounds the batches in flight, as
// ScalingConfig.MaximumConcurrency does on Lambda.
type eventSourceMapping struct {
	sqs      *sqs.Client
	queueURL string
	queueARN string
	sqsMu    sync.Mutex

	deleted       atomic.Int32 // messages deleted after success
	invocations   atomic.Int32
	inFlight      atomic.Int32
	maxInFlight   atomic.Int32
	functionError atomic.Int32 // invocations that returned an error: whole batch retried

	mu         sync.Mutex
	deliveries map[string]int // message id -> times given to the function
	failed     map[string]int // message id -> times reported in batchItemFailures
	problems   []error
}

func (m *eventSourceMapping) problem(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.problems = append(m.problems, err)
}

// run receives batches and hands each to a free emulator, until ctx is
// done. Only the invocations run in parallel: the calls to SQS go one at a
// time (sqsMu), because moto's SQS is not safe for concurrent receives
// (a receive racing another can fail with a 500 after counting the
// messages as received, which sends healthy messages to the dead-letter
// queue).
func (m *eventSourceMapping) run(ctx context.Context, ems []*emulator.Emulator) {
	free := make(chan *emulator.Emulator, len(ems))
	for _, em := range ems {
		free <- em
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var em *emulator.Emulator
		select {
		case em = <-free:
		case <-ctx.Done():
			return
		}
		m.sqsMu.Lock()
		out, err := m.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(m.queueURL),
			MaxNumberOfMessages:         10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		m.sqsMu.Unlock()
		switch {
		case err != nil && ctx.Err() == nil:
			m.problem(fmt.Errorf("receive: %w", err))
			fallthrough
		case err != nil || len(out.Messages) == 0:
			free <- em
			select {
			case <-ctx.Done():
			// Nothing visible: wait as a long poll would, without
			// spending moto's time (it serves one request at a time).
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		wg.Go(func() {
			m.deliver(ctx, em, out.Messages)
			free <- em
		})
	}
}

// deliver invokes the function with one batch and settles the outcome.
func (m *eventSourceMapping) deliver(ctx context.Context, em *emulator.Emulator, msgs []types.Message) {
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for prev := m.maxInFlight.Load(); n > prev && !m.maxInFlight.CompareAndSwap(prev, n); prev = m.maxInFlight.Load() {
	}
	m.invocations.Add(1)

	ev := events.SQSEvent{}
	handles := map[string]string{}
	m.mu.Lock()
	for _, msg := range msgs {
		id := aws.ToString(msg.MessageId)
		handles[id] = aws.ToString(msg.ReceiptHandle)
		m.deliveries[id]++
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: id, ReceiptHandle: handles[id], Body: aws.ToString(msg.Body),
			Md5OfBody: aws.ToString(msg.MD5OfBody), Attributes: msg.Attributes,
			EventSourceARN: m.queueARN, EventSource: "aws:sqs", AWSRegion: "us-east-1",
		})
	}
	m.mu.Unlock()

	payload, _ := json.Marshal(ev)
	resp, err := em.Invoke(ctx, payload)
	if err != nil {
		if ctx.Err() == nil {
			m.problem(fmt.Errorf("invoke: %w", err))
		}
		return // nothing deleted: the batch comes back, as on Lambda
	}
	var out struct {
		events.SQSEventResponse
		ErrorType string `json:"errorType"`
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil || out.ErrorType != "" {
		// A function error (every record failed) or a response Lambda
		// cannot read: Lambda retries the whole batch.
		m.functionError.Add(1)
		for id := range handles {
			m.countFailed(id)
		}
		return
	}
	for _, f := range out.BatchItemFailures {
		if _, ok := handles[f.ItemIdentifier]; !ok {
			// Lambda treats an unknown identifier as a failure of the
			// whole batch; our function must never send one.
			m.problem(fmt.Errorf("batchItemFailures names %q, not in the batch", f.ItemIdentifier))
			return
		}
		m.countFailed(f.ItemIdentifier)
		delete(handles, f.ItemIdentifier)
	}
	if len(handles) == 0 {
		return
	}
	var entries []types.DeleteMessageBatchRequestEntry
	for id, h := range handles {
		entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(id), ReceiptHandle: aws.String(h)})
	}
	m.sqsMu.Lock()
	del, err := m.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(m.queueURL), Entries: entries})
	m.sqsMu.Unlock()
	switch {
	case err != nil && ctx.Err() == nil:
		m.problem(fmt.Errorf("delete: %w", err))
	case err == nil && len(del.Failed) > 0:
		m.problem(fmt.Errorf("delete: %d entries failed: %s", len(del.Failed), aws.ToString(del.Failed[0].Message)))
	}
	if err == nil {
		m.deleted.Add(int32(len(del.Successful)))
	}
}

// produce sends bodies to the queue, 10 per request, as fast as moto takes
// them while at most backlog messages wait. The cap is for moto: its SQS
// spends time in proportion to the queue's length on every message sent or
// received, so 1,000 messages held at once cost minutes of CPU. A backlog of
// a few hundred keeps every batch slot busy, which is what the function
// sees of a burst.
func (m *eventSourceMapping) produce(ctx context.Context, bodies []string, backlog int) error {
	sent := 0
	for chunk := range slices.Chunk(bodies, 10) {
		for sent-int(m.deleted.Load()) > backlog {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		var entries []types.SendMessageBatchRequestEntry
		for i, b := range chunk {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(b)})
		}
		m.sqsMu.Lock()
		out, err := m.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(m.queueURL), Entries: entries})
		m.sqsMu.Unlock()
		if err != nil {
			return fmt.Errorf("send: %w", err)
		}
		if len(out.Failed) > 0 {
			return fmt.Errorf("send: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
		}
		sent += len(chunk)
	}
	return nil
}

func (m *eventSourceMapping) countFailed(id string) {
	m.mu.Lock()
	m.failed[id]++
	m.mu.Unlock()
}

func (m *eventSourceMapping) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return errors.Join(m.problems...)
}

package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// copyVisibility hides the messages being moved from other receivers of
// the DLQ; one that is not moved in that time comes back there.
const copyVisibility = 60 // seconds

// copyMessages moves the messages ten at a time: receive them from the DLQ, send
// each to the destination with its original body, message attributes and
// trace header, then delete the ones sent. A crash between the send and
// the delete leaves a message in both queues: the consumer's idempotency
// makes the second delivery harmless. It stops when the DLQ answers two
// receives in a row with nothing, or after r.max messages.
func (r *redrive) copyMessages(ctx context.Context) error {
	dest, err := r.destination(ctx)
	if err != nil {
		return err
	}
	start := r.now()
	pace := pacer{rate: r.rate, start: time.Now()}
	var moved, failed, undeleted int
	var firstFailure string
	summary := func() {
		r.clearProgress()
		fmt.Fprintf(r.out, "moved %d messages from %s to %s by receive, send, delete, in %s\n", moved, escape(r.dlq.url), escape(dest.url), r.now().Sub(start).Round(time.Second))
		if undeleted > 0 {
			fmt.Fprintf(r.out, "%d of them were sent but could not be deleted from the dead-letter queue: they move again on the next run, which the consumer's idempotency makes harmless\n", undeleted)
		}
	}
	for empty := 0; empty < 2 && (r.max == 0 || moved+failed < r.max); {
		n := 10
		if r.max > 0 {
			n = min(n, r.max-moved-failed)
		}
		msgs, err := r.receive(ctx, n, copyVisibility)
		if err != nil {
			summary()
			return err
		}
		if len(msgs) == 0 {
			empty++
			continue
		}
		empty = 0
		if err := pace.wait(ctx, len(msgs)); err != nil {
			summary()
			return err
		}
		out, err := r.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(dest.url), Entries: entries(msgs, dest.fifo())})
		if err != nil {
			r.release(context.WithoutCancel(ctx), msgs)
			summary()
			return fmt.Errorf("send to %s (the %d messages received stay in the dead-letter queue): %w", dest.url, len(msgs), err)
		}
		// A message that was not sent stays hidden in the dead-letter
		// queue for copyVisibility, so that this run does not take it
		// again and again.
		for _, f := range out.Failed {
			failed++
			if firstFailure == "" {
				firstFailure = fmt.Sprintf("%s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
			}
		}
		var sent []types.DeleteMessageBatchRequestEntry
		for _, s := range out.Successful {
			i, _ := strconv.Atoi(aws.ToString(s.Id))
			sent = append(sent, types.DeleteMessageBatchRequestEntry{Id: s.Id, ReceiptHandle: msgs[i].ReceiptHandle})
		}
		moved += len(sent)
		if len(sent) > 0 {
			del, err := r.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(r.dlq.url), Entries: sent})
			switch {
			case err != nil:
				undeleted += len(sent)
			default:
				undeleted += len(del.Failed)
			}
		}
		if r.terminal {
			fmt.Fprintf(r.err, "\r\033[Kmoved %d messages", moved)
		}
	}
	summary()
	if failed > 0 {
		return fmt.Errorf("%d messages could not be sent, and stay in the dead-letter queue (the first: %s)", failed, firstFailure)
	}
	return nil
}

// entries returns the send requests of msgs, numbered by their index.
// To a FIFO queue, a message keeps its group, and its deduplication ID is
// its message ID in the DLQ: a second send of it within SQS's five-minute
// deduplication interval (a retried run) is dropped.
func entries(msgs []types.Message, fifo bool) []types.SendMessageBatchRequestEntry {
	out := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		e := types.SendMessageBatchRequestEntry{
			Id:                aws.String(strconv.Itoa(i)),
			MessageBody:       m.Body,
			MessageAttributes: m.MessageAttributes,
		}
		if trace := m.Attributes[string(types.MessageSystemAttributeNameAWSTraceHeader)]; trace != "" {
			e.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{
				string(types.MessageSystemAttributeNameAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(trace)},
			}
		}
		if fifo {
			e.MessageGroupId = aws.String(m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)])
			e.MessageDeduplicationId = m.MessageId
		}
		out[i] = e
	}
	return out
}

// pacer spaces batches so that, on average since start, at most rate
// messages go a second; a rate of 0 does not wait.
type pacer struct {
	rate  int
	start time.Time
	sent  int
}

// wait waits until n more messages may go, or ctx ends.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p.rate > 0 {
		due := p.start.Add(time.Duration(p.sent) * time.Second / time.Duration(p.rate))
		if d := time.Until(due); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	p.sent += n
	return nil
}

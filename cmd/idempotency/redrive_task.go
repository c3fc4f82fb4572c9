package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// task moves the messages with one StartMessageMoveTask, and follows it
// until it ends. A task that cannot start is a *taskUnavailableError.
// When ctx ends first (Ctrl-C), the task is cancelled.
func (r *redrive) task(ctx context.Context) error {
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(r.dlq.arn)}
	dest := "their source queues"
	if r.to.arn != "" {
		in.DestinationArn, dest = aws.String(r.to.arn), r.to.url
	}
	if r.rate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(r.rate))
	}
	start := r.now()
	out, err := r.sqs.StartMessageMoveTask(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &taskUnavailableError{err: err}
	}
	handle := aws.ToString(out.TaskHandle)
	fmt.Fprintf(r.out, "move task started: %s to %s\n", escape(r.dlq.url), escape(dest))
	tick := time.NewTicker(r.pollEvery)
	defer tick.Stop()
	var moved int64
	for {
		select {
		case <-ctx.Done():
			_, err := r.sqs.CancelMessageMoveTask(context.WithoutCancel(ctx), &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(handle)})
			if err != nil {
				return fmt.Errorf("interrupted after about %d messages, and the move task could not be cancelled (cancel it with aws sqs cancel-message-move-task --task-handle %s): %w", moved, handle, err)
			}
			return fmt.Errorf("interrupted: the move task is cancelled, after about %d messages; run redrive again to move the rest", moved)
		case <-tick.C:
		}
		list, err := r.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(r.dlq.arn), MaxResults: aws.Int32(1)})
		if err != nil {
			return fmt.Errorf("follow the move task (it goes on: aws sqs list-message-move-tasks --source-arn %s): %w", r.dlq.arn, err)
		}
		if len(list.Results) == 0 {
			return fmt.Errorf("the move task of %s is gone from ListMessageMoveTasks", r.dlq.arn)
		}
		// The most recent task comes first, and a queue runs one at a
		// time: ours. Only a running task has its handle.
		t := list.Results[0]
		moved = t.ApproximateNumberOfMessagesMoved
		switch status := aws.ToString(t.Status); status {
		case "RUNNING", "CANCELLING":
			if r.terminal {
				fmt.Fprintf(r.err, "\r\033[Kmoved about %d of %d messages", moved, aws.ToInt64(t.ApproximateNumberOfMessagesToMove))
			}
		case "COMPLETED":
			r.clearProgress()
			fmt.Fprintf(r.out, "moved %d messages from %s to %s by a move task, in %s\n", moved, escape(r.dlq.url), escape(dest), r.now().Sub(start).Round(time.Second))
			return nil
		default:
			r.clearProgress()
			return fmt.Errorf("the move task ended %s after moving %d messages: %s", status, moved, aws.ToString(t.FailureReason))
		}
	}
}

func (r *redrive) clearProgress() {
	if r.terminal {
		fmt.Fprint(r.err, "\r\033[K")
	}
}

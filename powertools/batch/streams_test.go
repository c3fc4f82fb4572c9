package batch_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
)

// Each source reports failures with the identifier Lambda expects: the SQS
// message id, the Kinesis or DynamoDB Streams sequence number (not the
// eventID, which Lambda does not accept as an item identifier).
func TestSourceIdentifiers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() (any, error)
		want string
	}{
		{
			name: "sqs message id",
			run: func() (any, error) {
				h := batch.SQSHandler(func(_ context.Context, m events.SQSMessage) error {
					if m.Body == "bad" {
						return errBoom
					}
					return nil
				}, quiet())
				return h(ctx, events.SQSEvent{Records: []events.SQSMessage{
					{MessageId: "id-1", Body: "ok"}, {MessageId: "id-2", Body: "bad"},
				}})
			},
			want: `{"batchItemFailures":[{"itemIdentifier":"id-2"}]}`,
		},
		{
			name: "kinesis sequence number",
			run: func() (any, error) {
				h := batch.KinesisHandler(func(_ context.Context, r events.KinesisEventRecord) error {
					if string(r.Kinesis.Data) == "bad" {
						return errBoom
					}
					return nil
				}, quiet())
				return h(ctx, events.KinesisEvent{Records: []events.KinesisEventRecord{
					{EventID: "shardId-000:1", Kinesis: events.KinesisRecord{SequenceNumber: "4959001", Data: []byte("ok")}},
					{EventID: "shardId-000:2", Kinesis: events.KinesisRecord{SequenceNumber: "4959002", Data: []byte("bad")}},
					{EventID: "shardId-000:3", Kinesis: events.KinesisRecord{SequenceNumber: "4959003", Data: []byte("ok")}},
				}})
			},
			want: `{"batchItemFailures":[{"itemIdentifier":"4959002"}]}`,
		},
		{
			name: "dynamodb streams sequence number",
			run: func() (any, error) {
				h := batch.DynamoDBHandler(func(_ context.Context, r events.DynamoDBEventRecord) error {
					if r.EventName == "REMOVE" {
						return errBoom
					}
					return nil
				}, quiet())
				return h(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
					{EventID: "e1", EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: "111"}},
					{EventID: "e2", EventName: "REMOVE", Change: events.DynamoDBStreamRecord{SequenceNumber: "222"}},
				}})
			},
			want: `{"batchItemFailures":[{"itemIdentifier":"222"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(resp)
			if string(got) != tt.want {
				t.Errorf("response = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestStreamsAllFailAndPanics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kin := batch.KinesisHandler(func(context.Context, events.KinesisEventRecord) error { panic("poison") }, quiet())
	_, err := kin(ctx, events.KinesisEvent{Records: []events.KinesisEventRecord{{Kinesis: events.KinesisRecord{SequenceNumber: "1"}}}})
	if !errors.As(err, new(*batch.BatchError)) || !errors.As(err, new(*batch.PanicError)) {
		t.Errorf("kinesis: err = %v, want a BatchError wrapping a PanicError", err)
	}
	ddb := batch.DynamoDBHandler(func(context.Context, events.DynamoDBEventRecord) error { return errBoom }, quiet())
	resp, err := ddb(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Errorf("empty dynamodb batch: %+v, %v; want success", resp, err)
	}
	_, err = ddb(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{Change: events.DynamoDBStreamRecord{SequenceNumber: "1"}}}})
	var be *batch.BatchError
	if !errors.As(err, &be) || be.Failures[0].ID != "1" || !errors.Is(err, errBoom) {
		t.Errorf("dynamodb: err = %v, want *BatchError for sequence 1 wrapping the function's error", err)
	}
}

package batch_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
)

// TestEventWithoutRecords checks that an event with no Records array, as
// a misrouted trigger sends, fails with a NoRecordsError instead of passing for
// an empty batch, while an empty array stays an empty batch.
func TestEventWithoutRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ran := false
	sqs := batch.SQSHandler(func(context.Context, events.SQSMessage) error { ran = true; return nil }, quiet())
	kin := batch.KinesisHandler(func(context.Context, events.KinesisEventRecord) error { ran = true; return nil }, quiet())
	ddb := batch.DynamoDBHandler(func(context.Context, events.DynamoDBEventRecord) error { ran = true; return nil }, quiet())
	handlers := map[string]func(raw string) error{
		"SQS": func(raw string) error {
			var ev events.SQSEvent
			mustDecode(t, raw, &ev)
			_, err := sqs(ctx, ev)
			return err
		},
		"Kinesis": func(raw string) error {
			var ev events.KinesisEvent
			mustDecode(t, raw, &ev)
			_, err := kin(ctx, ev)
			return err
		},
		"DynamoDB Streams": func(raw string) error {
			var ev events.DynamoDBEvent
			mustDecode(t, raw, &ev)
			_, err := ddb(ctx, ev)
			return err
		},
	}
	tests := []struct {
		name    string
		raw     string
		refused bool
	}{
		{"empty object", `{}`, true},
		{"null Records", `{"Records": null}`, true},
		{"an EventBridge event", `{"version":"0","id":"e1","detail-type":"Order","source":"shop","detail":{}}`, true},
		{"empty array", `{"Records": []}`, false},
	}
	for source, handle := range handlers {
		for _, tc := range tests {
			t.Run(source+"/"+tc.name, func(t *testing.T) {
				err := handle(tc.raw)
				var nre *batch.NoRecordsError
				switch {
				case tc.refused && (!errors.As(err, new(*batch.NoRecordsError)) || !errors.As(err, &nre) || nre.Source != source):
					t.Errorf("err = %v, want a *NoRecordsError for %s", err, source)
				case !tc.refused && err != nil:
					t.Errorf("err = %v, want an empty batch", err)
				}
				if ran {
					t.Error("the record function ran")
				}
			})
		}
	}
}

// TestFailedRecordWithoutIdentifier checks that a failed record with no
// identifier fails the invocation, so that Lambda retries the batch,
// instead of reporting an empty itemIdentifier in a successful response.
func TestFailedRecordWithoutIdentifier(t *testing.T) {
	t.Parallel()
	h := batch.SQSHandler(func(_ context.Context, m events.SQSMessage) error {
		if m.MessageId == "" {
			return errors.New("declined")
		}
		return nil
	}, quiet())
	_, err := h(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1"}, {MessageId: ""}}})
	var nie *batch.NoIdentifierError
	if !errors.As(err, new(*batch.NoIdentifierError)) || !errors.As(err, &nie) || nie.Failure.Index != 1 {
		t.Fatalf("err = %v, want a *NoIdentifierError for record 1", err)
	}
}

func mustDecode(t *testing.T, raw string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		t.Fatal(err)
	}
}

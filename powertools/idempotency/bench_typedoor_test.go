package idempotency_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// benchS3 is an S3 event notification as S3 writes it (1.1 KB).
const benchS3 = `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"eu-west-1","eventTime":"2026-01-02T03:04:05.000Z","eventName":"ObjectCreated:Put","userIdentity":{"principalId":"AWS:AIDAEXAMPLE"},"requestParameters":{"sourceIPAddress":"203.0.113.7"},"responseElements":{"x-amz-request-id":"C3D13FE58DE4C810","x-amz-id-2":"FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD"},"s3":{"s3SchemaVersion":"1.0","configurationId":"invoices","bucket":{"name":"invoices","ownerIdentity":{"principalId":"A3NL1KOZZKExample"},"arn":"arn:aws:s3:::invoices"},"object":{"key":"invoice+1.pdf","size":1024,"eTag":"d41d8cd98f00b204e9800998ecf8427e","sequencer":"0055AED6DCD90281E5"}}}]}`

// BenchmarkTypeDoor measures what reading as the handler's type decodes
// costs a replay: on the 2.2 KB event, a validation whose null the type
// tells from absent (a map's entry) against one on a plain field; on an
// S3 notification, a key inside S3Object, which decodes itself, against
// the same member read from a json.RawMessage.
func BenchmarkTypeDoor(b *testing.B) {
	apigw, setOrder := benchEvent(b)
	setOrder(1)
	for _, bc := range []struct {
		name  string
		event []byte
		h     *idempotency.Handler
	}{
		{"replay/plain_field", apigw, typeDoorHandler[events.APIGatewayV2HTTPRequest]("requestContext.requestId", "requestContext.http.method")},
		{"replay/map_entry", apigw, typeDoorHandler[events.APIGatewayV2HTTPRequest]("requestContext.requestId", `headers."content-type"`)},
		{"replay/s3_raw", []byte(benchS3), typeDoorHandler[json.RawMessage]("Records[0].s3.object.key", "")},
		{"replay/s3_decoded", []byte(benchS3), typeDoorHandler[events.S3Event]("Records[0].s3.object.urlDecodedKey", "")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			if _, err := bc.h.Invoke(ctx, bc.event); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := bc.h.Invoke(ctx, bc.event); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func typeDoorHandler[In any](key, validation string) *idempotency.Handler {
	opts := []idempotency.Option{idempotency.WithKeyPrefix("bench"), idempotency.WithEventKey(key)}
	if validation != "" {
		opts = append(opts, idempotency.WithPayloadValidation(validation))
	}
	return idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, In) (string, error) { return "ok", nil }, opts...)
}

package jmespath

// Envelopes are expressions that reach through the wrapping an AWS event
// source puts around an application's own payload, decoding it on the way
// (a JSON string, base64, gzip). Use one as an idempotency event key, or
// compile it to unwrap an event before looking into the payload.
//
// The expressions are those of Powertools for AWS Lambda (Python), module
// aws_lambda_powertools.utilities.jmespath_utils.envelopes, character for
// character, so an expression copied between a Python and a Go function
// selects the same data. They rely on the functions powertools_json,
// powertools_base64 and powertools_base64_gzip, which [Compile] provides by
// default.
//
// Envelopes over a batch (SQS, Kinesis, Firehose, CloudWatch Logs) return a
// list with one payload per record, in the order of the records.
const (
	// EnvelopeAPIGatewayREST returns the JSON request body of an API Gateway
	// REST API proxy event (payload format 1.0), decoded. A body sent with
	// isBase64Encoded true is not decoded: it makes the search fail.
	EnvelopeAPIGatewayREST = "powertools_json(body)"

	// EnvelopeAPIGatewayHTTP returns the JSON request body of an API Gateway
	// HTTP API event (payload format 2.0), decoded. It is the same expression
	// as [EnvelopeAPIGatewayREST]: both formats keep the body in a top-level
	// "body" string.
	EnvelopeAPIGatewayHTTP = EnvelopeAPIGatewayREST

	// EnvelopeSQS returns the decoded JSON body of every message of an SQS
	// event, as a list.
	EnvelopeSQS = "Records[*].powertools_json(body)"

	// EnvelopeSNS returns the decoded JSON message of an SNS event. Lambda
	// delivers SNS notifications one per invocation, so only the first
	// record is read.
	EnvelopeSNS = "Records[0].Sns.Message | powertools_json(@)"

	// EnvelopeEventBridge returns the detail object of an EventBridge event,
	// which EventBridge delivers already decoded.
	EnvelopeEventBridge = "detail"

	// EnvelopeCloudWatchEventsScheduled returns the detail of a scheduled
	// EventBridge (formerly CloudWatch Events) rule's event: an empty object,
	// since a schedule carries no data of its own.
	EnvelopeCloudWatchEventsScheduled = EnvelopeEventBridge

	// EnvelopeKinesisDataStream returns the data of every record of a Kinesis
	// Data Streams event, base64-decoded then JSON-decoded, as a list.
	EnvelopeKinesisDataStream = "Records[*].kinesis.powertools_json(powertools_base64(data))"

	// EnvelopeCloudWatchLogs returns the log events of a CloudWatch Logs
	// subscription event: awslogs.data is base64-decoded, gunzipped and
	// JSON-decoded, and its logEvents list (objects with id, timestamp and
	// message) is returned.
	EnvelopeCloudWatchLogs = "awslogs.powertools_base64_gzip(data) | powertools_json(@).logEvents[*]"

	// EnvelopeS3SQS returns, for every message of an SQS event whose bodies
	// are S3 event notifications, the notification's first record (the one
	// with eventName, s3.bucket and s3.object), as a list.
	EnvelopeS3SQS = "Records[*].powertools_json(body).Records[0]"

	// EnvelopeS3SNSSQS is [EnvelopeS3SQS] for S3 event notifications
	// published to an SNS topic that delivers to the SQS queue without raw
	// message delivery: each body is an SNS notification whose Message is
	// the S3 event notification.
	EnvelopeS3SNSSQS = "Records[*].powertools_json(body).powertools_json(Message).Records[0]"

	// EnvelopeS3KinesisFirehose returns, for every record of a Kinesis Data
	// Firehose transformation event whose data are base64 S3 event
	// notifications, the notification's first record, as a list.
	EnvelopeS3KinesisFirehose = "records[*].powertools_json(powertools_base64(data)).Records[0]"

	// EnvelopeS3SNSKinesisFirehose is [EnvelopeS3KinesisFirehose] for S3 event
	// notifications published to an SNS topic that delivers to the Firehose
	// stream: each record's data is a base64 SNS notification whose Message
	// is the S3 event notification.
	EnvelopeS3SNSKinesisFirehose = "records[*].powertools_json(powertools_base64(data)).powertools_json(Message).Records[0]"

	// EnvelopeS3EventBridgeSQS returns, for every message of an SQS event
	// whose bodies are S3 events routed by an EventBridge rule, the event's
	// detail (bucket, object, reason, requester), as a list.
	EnvelopeS3EventBridgeSQS = "Records[*].powertools_json(body).detail"
)

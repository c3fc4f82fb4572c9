package jmespath_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gopowertools/lambda/jmespath"
)

// envelopeCases pairs every envelope with its fixture: testdata/events/<name>.json
// is the event as Lambda delivers it and testdata/expected/<name>.json what the
// envelope must return. Both are generated from testdata/templates/<name>.tmpl
// by the generator in testdata, because the base64 and gzip fields cannot
// be written by hand.
var envelopeCases = []struct {
	name     string
	envelope string
	fixture  string
}{
	{"APIGatewayREST", jmespath.EnvelopeAPIGatewayREST, "apigw-rest"},
	{"APIGatewayHTTP", jmespath.EnvelopeAPIGatewayHTTP, "apigw-http"},
	{"SQS", jmespath.EnvelopeSQS, "sqs"},
	{"SNS", jmespath.EnvelopeSNS, "sns"},
	{"EventBridge", jmespath.EnvelopeEventBridge, "eventbridge"},
	{"CloudWatchEventsScheduled", jmespath.EnvelopeCloudWatchEventsScheduled, "cloudwatch-scheduled"},
	{"KinesisDataStream", jmespath.EnvelopeKinesisDataStream, "kinesis"},
	{"CloudWatchLogs", jmespath.EnvelopeCloudWatchLogs, "cloudwatch-logs"},
	{"S3SQS", jmespath.EnvelopeS3SQS, "s3-sqs"},
	{"S3SNSSQS", jmespath.EnvelopeS3SNSSQS, "s3-sns-sqs"},
	{"S3KinesisFirehose", jmespath.EnvelopeS3KinesisFirehose, "s3-firehose"},
	{"S3SNSKinesisFirehose", jmespath.EnvelopeS3SNSKinesisFirehose, "s3-sns-firehose"},
	{"S3EventBridgeSQS", jmespath.EnvelopeS3EventBridgeSQS, "s3-eventbridge-sqs"},
}

func TestEnvelopes(t *testing.T) {
	t.Parallel()
	for _, tc := range envelopeCases {
		t.Run(tc.name, func(t *testing.T) {
			raw := readEnvelopeFile(t, "events", tc.fixture)
			want := decodeEnvelopeJSON(t, readEnvelopeFile(t, "expected", tc.fixture))
			expr, err := jmespath.Compile(tc.envelope)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tc.envelope, err)
			}

			got, err := expr.Search(decodeEnvelopeJSON(t, raw))
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			if diff := cmp.Diff(want, numbersAsFloats(got)); diff != "" {
				t.Errorf("Search on the decoded event (-want +got):\n%s", diff)
			}

			got, err = expr.Search(decodeEnvelopeNumbers(t, raw))
			if err != nil {
				t.Fatalf("Search (json.Number data): %v", err)
			}
			if diff := cmp.Diff(want, numbersAsFloats(got)); diff != "" {
				t.Errorf("Search on the event decoded with UseNumber (-want +got):\n%s", diff)
			}

			got, err = expr.SearchJSON(raw)
			if err != nil {
				t.Fatalf("SearchJSON: %v", err)
			}
			if diff := cmp.Diff(want, numbersAsFloats(got)); diff != "" {
				t.Errorf("SearchJSON on the raw event (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnvelopeFixturesCovered keeps the table and testdata in step: a fixture
// that no envelope reads, or a template whose output was not regenerated,
// shows up here.
func TestEnvelopeFixturesCovered(t *testing.T) {
	t.Parallel()
	var inTable []string
	for _, tc := range envelopeCases {
		inTable = append(inTable, tc.fixture)
	}
	slices.Sort(inTable)
	for _, dir := range []string{"events", "expected", "templates"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
			if name != "payloads" {
				names = append(names, name)
			}
		}
		if diff := cmp.Diff(inTable, names); diff != "" {
			t.Errorf("testdata/%s does not match the envelope table (-table +files):\n%s", dir, diff)
		}
	}
}

// A binary body (isBase64Encoded) is not JSON text: the envelope must report
// it, as an *InvalidValueError, rather than return something that is not the
// payload.
func TestEnvelopeAPIGatewayRESTBase64Body(t *testing.T) {
	t.Parallel()
	var event map[string]any
	if err := json.Unmarshal(readEnvelopeFile(t, "events", "apigw-rest"), &event); err != nil {
		t.Fatal(err)
	}
	event["body"] = base64.StdEncoding.EncodeToString([]byte(event["body"].(string)))
	event["isBase64Encoded"] = true

	got, err := jmespath.MustCompile(jmespath.EnvelopeAPIGatewayREST).Search(event)
	var invalid *jmespath.InvalidValueError
	if !errors.As(err, &invalid) {
		t.Fatalf("Search on a base64 body = %v, %v; want an *InvalidValueError", got, err)
	}
}

func readEnvelopeFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeEnvelopeJSON decodes the way a Lambda handler taking a
// map[string]any does: numbers become float64.
func decodeEnvelopeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// decodeEnvelopeNumbers decodes as a handler that keeps numbers exact does.
func decodeEnvelopeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// numbersAsFloats turns json.Number, which SearchJSON and powertools_json
// return, into float64, so results compare by value with the expected
// documents: both sides parse the same decimal text, and the fixtures hold no
// integer beyond 2^53.
func numbersAsFloats(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v
		}
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = numbersAsFloats(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = numbersAsFloats(e)
		}
		return out
	}
	return v
}

// An SQS batch carries one order per message; the envelope unwraps them all
// so the handler, or an idempotency key, sees the orders themselves.
func Example_envelope() {
	event := []byte(`{
	  "Records": [
	    {"messageId": "059f36b4", "body": "{\"order_id\":\"ord-1001\",\"total\":28.2}", "eventSource": "aws:sqs"},
	    {"messageId": "2e1424d4", "body": "{\"order_id\":\"ord-1002\",\"total\":9.9}", "eventSource": "aws:sqs"}
	  ]
	}`)
	orders, err := jmespath.MustCompile(jmespath.EnvelopeSQS).SearchJSON(event)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, order := range orders.([]any) {
		o := order.(map[string]any)
		fmt.Println(o["order_id"], o["total"])
	}
	// Output:
	// ord-1001 28.2
	// ord-1002 9.9
}

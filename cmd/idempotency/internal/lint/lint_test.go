package lint

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/dynamo"
)

// TestExpiryAttrIsTheStores: the TTL rule checks the attribute where the
// DynamoDB store writes the expiry (the option functions see the
// defaults).
func TestExpiryAttrIsTheStores(t *testing.T) {
	t.Parallel()
	var attr string
	_, err := dynamo.New(dynamodb.New(dynamodb.Options{}), func(o *dynamo.Options) {
		attr, o.TableName = o.ExpiryAttr, "any"
	})
	if err != nil {
		t.Fatal(err)
	}
	if attr != ExpiryAttr {
		t.Errorf("the store writes the expiry to %q, the rule checks TTL on %q", attr, ExpiryAttr)
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		96 * time.Hour: "96h", 90 * time.Minute: "90m", 45 * time.Second: "45s", 1500 * time.Millisecond: "1.5s",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestFindingsNameTheResource: each finding's String starts with the
// logical ID and the rule, and ends with the fix.
func TestFindingsNameTheResource(t *testing.T) {
	t.Parallel()
	tmpl, err := template.Parse([]byte(`
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 10
      Events:
        Q: {Type: SQS, Properties: {Queue: !GetAtt Queue.Arn}}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range Check(tmpl) {
		got[f.Resource+" "+f.Rule] = true
		if f.Problem == "" || f.Fix == "" {
			t.Errorf("%+v: no problem or no fix", f)
		}
	}
	for _, want := range []string{"Queue " + RuleVisibilityTimeout, "Queue " + RuleDeadLetterQueue, "Fn " + RuleBatchItemFailures} {
		if !got[want] {
			t.Errorf("no finding %q in %v", want, got)
		}
	}
}

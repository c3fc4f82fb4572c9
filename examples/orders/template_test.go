package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/examples/internal/template"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestTemplate checks the retry settings of template.yaml that only work
// together: cfn-lint knows the resource schemas, not these rules.
func TestTemplate(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range templateProblems(t, raw) {
		t.Error(p)
	}
}

// TestTemplateChecks breaks the settings one at a time, to show that each
// rule of the template's test catches its mistake.
func TestTemplateChecks(t *testing.T) {
	t.Parallel()
	good := `
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TimeToLiveSpecification: {AttributeName: expiration, Enabled: true}
  DLQ:
    Type: AWS::SQS::Queue
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 60
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt DLQ.Arn
        maxReceiveCount: 3
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 10
      Events:
        Q:
          Type: SQS
          Properties:
            Queue: !GetAtt [Queue, Arn]
            FunctionResponseTypes: [ReportBatchItemFailures]
`
	if p := templateProblems(t, []byte(good)); len(p) != 0 {
		t.Fatalf("the good template has problems: %v", p)
	}
	for _, tt := range []struct{ name, from, to, want string }{
		{"visibility below 6x timeout", "VisibilityTimeout: 60", "VisibilityTimeout: 59", "visibility timeout 59s"},
		{"visibility default", "VisibilityTimeout: 60", "DelaySeconds: 0", "visibility timeout 30s"},
		{"no dead-letter queue", "deadLetterTargetArn: !GetAtt DLQ.Arn", "deadLetterTargetArn: arn:aws:sqs:x", "no dead-letter queue"},
		{"no maxReceiveCount", "maxReceiveCount: 3", "x: 3", "maxReceiveCount"},
		{"no partial batch response", "FunctionResponseTypes: [ReportBatchItemFailures]", "BatchSize: 10", "ReportBatchItemFailures"},
		{"TTL on another attribute", "AttributeName: expiration", "AttributeName: ttl", `TTL attribute "ttl"`},
		{"TTL disabled", "Enabled: true", "Enabled: false", "TTL is not enabled"},
		{"no SQS event", "Type: SQS", "Type: Kinesis", "no SQS event"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			broken := strings.Replace(good, tt.from, tt.to, 1)
			problems := templateProblems(t, []byte(broken))
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Errorf("problems %q, want one about %q", problems, tt.want)
			}
		})
	}
}

// templateProblems returns what breaks the rules in a SAM template.
func templateProblems(t *testing.T, raw []byte) []string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("template: %v", err)
	}
	root := doc.Content[0]
	resources := template.Lookup(root, "Resources")
	// The TTL rule is for tables of idempotency records: those a function
	// names in POWERTOOLS_IDEMPOTENCY_TABLE, or every table when none is named. Other
	// tables, such as the settlement example's ledger, keep their items.
	idempotencyTables := map[string]bool{}
	for _, res := range mapping(resources) {
		if name, table := ref(resources, template.Lookup(res, "Properties", "Environment", "Variables", "POWERTOOLS_IDEMPOTENCY_TABLE")); table != nil {
			idempotencyTables[name] = true
		}
	}
	var problems []string
	sqsEvents := 0
	for name, res := range mapping(resources) {
		switch scalar(template.Lookup(res, "Type")) {
		case "AWS::Serverless::Function":
			timeout := intOr(template.Lookup(res, "Properties", "Timeout"), intOr(template.Lookup(root, "Globals", "Function", "Timeout"), 3))
			for event, ev := range mapping(template.Lookup(res, "Properties", "Events")) {
				if scalar(template.Lookup(ev, "Type")) != "SQS" {
					continue
				}
				sqsEvents++
				where := name + "." + event
				types := template.Lookup(ev, "Properties", "FunctionResponseTypes")
				if types == nil || !slices.ContainsFunc(types.Content, func(n *yaml.Node) bool { return n.Value == "ReportBatchItemFailures" }) {
					problems = append(problems, where+": no ReportBatchItemFailures: one failed record retries the whole batch")
				}
				qName, queue := ref(resources, template.Lookup(ev, "Properties", "Queue"))
				if queue == nil {
					problems = append(problems, where+": its queue is not a resource of this template")
					continue
				}
				// SQS's default visibility timeout is 30s.
				if vis := intOr(template.Lookup(queue, "Properties", "VisibilityTimeout"), 30); vis < 6*timeout {
					problems = append(problems, fmt.Sprintf("%s: visibility timeout %ds is less than 6 x the function timeout %ds", qName, vis, timeout))
				}
				redrive := template.Lookup(queue, "Properties", "RedrivePolicy")
				if _, dlq := ref(resources, template.Lookup(redrive, "deadLetterTargetArn")); dlq == nil || scalar(template.Lookup(dlq, "Type")) != "AWS::SQS::Queue" {
					problems = append(problems, qName+": no dead-letter queue of this template in its RedrivePolicy")
				}
				if n := intOr(template.Lookup(redrive, "maxReceiveCount"), 0); n < 1 {
					problems = append(problems, qName+": no maxReceiveCount in its RedrivePolicy")
				}
			}
		case "AWS::DynamoDB::Table":
			if len(idempotencyTables) > 0 && !idempotencyTables[name] {
				continue
			}
			ttl := template.Lookup(res, "Properties", "TimeToLiveSpecification")
			if attr := scalar(template.Lookup(ttl, "AttributeName")); attr != storeExpiryAttr(t) {
				problems = append(problems, fmt.Sprintf("%s: TTL attribute %q, but the store writes the expiry to %q", name, attr, storeExpiryAttr(t)))
			}
			if scalar(template.Lookup(ttl, "Enabled")) != "true" {
				problems = append(problems, name+": TTL is not enabled")
			}
		}
	}
	if sqsEvents == 0 {
		problems = append(problems, "no SQS event in the template")
	}
	return problems
}

// storeExpiryAttr is the attribute where the DynamoDB store writes a
// record's expiry by default: the option functions see the defaults.
func storeExpiryAttr(t *testing.T) string {
	var attr string
	_, err := dynamo.New(testenv.NewDynamoDB("http://127.0.0.1:1"), func(o *dynamo.Options) {
		attr = o.ExpiryAttr
		o.TableName = "any"
	})
	if err != nil {
		t.Fatal(err)
	}
	return attr
}

// mapping returns the entries of a mapping node.
func mapping(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = n.Content[i+1]
		}
	}
	return m
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func intOr(n *yaml.Node, def int) int {
	if v, err := strconv.Atoi(scalar(n)); err == nil {
		return v
	}
	return def
}

// ref resolves !GetAtt Name.Arn, !GetAtt [Name, Arn] or !Ref Name to the
// resource Name.
func ref(resources, n *yaml.Node) (string, *yaml.Node) {
	if n == nil {
		return "", nil
	}
	var name string
	switch {
	case n.Tag == "!GetAtt" && n.Kind == yaml.ScalarNode:
		name, _, _ = strings.Cut(n.Value, ".")
	case n.Tag == "!GetAtt" && n.Kind == yaml.SequenceNode && len(n.Content) > 0:
		name = n.Content[0].Value
	case n.Tag == "!Ref":
		name = n.Value
	default:
		return "", nil
	}
	return name, template.Lookup(resources, name)
}

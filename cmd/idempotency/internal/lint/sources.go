package lint

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
)

// AWS defaults the rules assume where the template sets nothing.
const (
	defaultVisibilityTimeout = 30                 // seconds, SQS
	defaultQueueRetention    = 4 * 24 * time.Hour // SQS
	defaultStreamRetention   = 24 * time.Hour     // Kinesis; DynamoDB Streams' is fixed
	defaultMaxEventAge       = 6 * time.Hour      // Lambda's asynchronous invocations
)

// The kinds of polled event sources.
const (
	kindSQS      = "SQS"
	kindKinesis  = "Kinesis"
	kindDynamoDB = "DynamoDB"
)

// asyncEvents are the SAM event types that invoke a function
// asynchronously: Lambda queues the event and retries it until
// MaximumEventAgeInSeconds.
var asyncEvents = []string{"EventBridgeRule", "CloudWatchEvent", "Schedule", "ScheduleV2", "SNS", "S3", "CloudWatchLogs", "IoTRule"}

// source is an event source that Lambda polls for a function: an SQS
// queue, a Kinesis stream or a DynamoDB stream, given as an event of a SAM
// function or as an AWS::Lambda::EventSourceMapping.
type source struct {
	fn    *template.Function // nil when the function is not in the template
	owner string             // the resource that declares it
	name  string             // how a finding names it
	kind  string
	props *yaml.Node // the event's or the mapping's Properties
	// target is the logical ID of the queue, stream or table read, or ""
	// when it is not in the template.
	target string
}

// sources returns the template's polled event sources.
func (c *checker) sources() []*source {
	var out []*source
	for _, fn := range c.t.Functions() {
		if fn.Type != template.ServerlessFunction {
			continue
		}
		names, events := template.Entries(fn.Resource.Prop("Events"))
		for i, ev := range events {
			kind := scalar(template.Lookup(ev, "Type"))
			props := template.Lookup(ev, "Properties")
			var arn *yaml.Node
			switch kind {
			case kindSQS:
				arn = template.Lookup(props, "Queue")
			case kindKinesis, kindDynamoDB:
				arn = template.Lookup(props, "Stream")
			default:
				continue
			}
			target, _ := c.t.Ref(arn)
			out = append(out, &source{fn: fn, owner: fn.ID, name: fmt.Sprintf("its %s event %s", kind, names[i]), kind: kind, props: props, target: target})
		}
	}
	for _, id := range c.t.IDs {
		r := c.t.Resource(id)
		if r.Type != "AWS::Lambda::EventSourceMapping" {
			continue
		}
		s := &source{owner: id, name: "the event source mapping", props: r.Properties}
		fnID, _ := c.t.Ref(r.Prop("FunctionName"))
		s.fn = c.t.Function(fnID)
		s.target, _ = c.t.Ref(r.Prop("EventSourceArn"))
		arn, _ := c.t.String(r.Prop("EventSourceArn"))
		switch t := c.t.Resource(s.target); {
		case t != nil && t.Type == "AWS::SQS::Queue", strings.HasPrefix(arn, "arn:aws:sqs:"):
			s.kind = kindSQS
		case t != nil && t.Type == "AWS::Kinesis::Stream", strings.Contains(arn, ":kinesis:"):
			s.kind = kindKinesis
		case t != nil && t.Type == "AWS::DynamoDB::Table", strings.Contains(arn, ":dynamodb:"):
			s.kind = kindDynamoDB
		default:
			continue // Kafka, MQ, DocumentDB: not these rules'
		}
		out = append(out, s)
	}
	return out
}

// checkSource checks the rules of one event source and of its queue.
func (c *checker) checkSource(s *source) {
	types := template.Items(template.Lookup(s.props, "FunctionResponseTypes"))
	if !slices.ContainsFunc(types, func(n *yaml.Node) bool { return scalar(n) == "ReportBatchItemFailures" }) {
		c.add(s.owner, RuleBatchItemFailures,
			"add FunctionResponseTypes: [ReportBatchItemFailures] to it, and return the failed records in batchItemFailures (powertools/batch does).",
			"%s does not report failures per record: one failed record fails its whole batch, and every record of the batch, the ones that succeeded too, is delivered again.", s.name)
	}
	queue := c.t.Resource(s.target)
	if s.kind != kindSQS || queue == nil || queue.Type != "AWS::SQS::Queue" {
		return
	}
	if s.fn != nil {
		timeout := s.fn.Timeout()
		vis, ok := c.t.Int(queue.Prop("VisibilityTimeout"))
		if !ok {
			vis = defaultVisibilityTimeout
		}
		if want := visibilityFactor * timeout; vis < want {
			c.add(queue.ID, RuleVisibilityTimeout,
				fmt.Sprintf("set VisibilityTimeout to at least %d.", want),
				"its visibility timeout of %d s is under %d times the timeout of %s (%d s): a message comes back, to another batch, while the batch holding it still runs or Lambda still retries it.",
				vis, visibilityFactor, s.fn.ID, timeout)
		}
	}
	redrive := queue.Prop("RedrivePolicy")
	dlq := template.Lookup(redrive, "deadLetterTargetArn")
	if _, literal := c.t.String(dlq); !literal && c.queue(dlq) == "" {
		c.add(queue.ID, RuleDeadLetterQueue,
			fmt.Sprintf("add a dead-letter queue: RedrivePolicy: {deadLetterTargetArn: !GetAtt <Queue>.Arn, maxReceiveCount: %d}, and an alarm on it.", MaxReceiveCount),
			"it has no dead-letter queue: a message that always fails (a poison message) is delivered again and again until its retention ends, then lost.")
		return
	}
	if n, ok := c.t.Int(template.Lookup(redrive, "maxReceiveCount")); !ok || n != MaxReceiveCount {
		got := "no maxReceiveCount"
		if ok {
			got = fmt.Sprintf("maxReceiveCount %d", n)
		}
		c.add(queue.ID, RuleMaxReceiveCount,
			fmt.Sprintf("set RedrivePolicy.maxReceiveCount to %d.", MaxReceiveCount),
			"its RedrivePolicy has %s, not the %d the docs recommend with per-record failures: fewer sends a message to the dead-letter queue on one transient failure, more retries a poison message longer.", got, MaxReceiveCount)
	}
}

// queue returns the logical ID of the SQS queue of the template that n
// refers to, or "".
func (c *checker) queue(n *yaml.Node) string {
	id, _ := c.t.Ref(n)
	if r := c.t.Resource(id); r == nil || r.Type != "AWS::SQS::Queue" {
		return ""
	}
	return id
}

// window is how long after its first delivery a retry of an event can
// reach a function, why, and what shortens it.
type window struct {
	age      time.Duration
	why, fix string
}

// retryWindow returns the longest time after which a retry of an event
// can reach fn: a message's retention in its queue, a record's retention
// in its stream (or the source's MaximumRecordAgeInSeconds), an
// asynchronous event's MaximumEventAgeInSeconds. An HTTP client's retries
// are not in the template.
func (c *checker) retryWindow(fn *template.Function, sources []*source) window {
	var w window
	longer := func(age time.Duration, why, fix string) {
		if age > w.age {
			w = window{age, why, fix}
		}
	}
	for _, s := range sources {
		if s.fn == nil || s.fn.ID != fn.ID {
			continue
		}
		target := c.t.Resource(s.target)
		switch s.kind {
		case kindSQS:
			if target == nil {
				longer(defaultQueueRetention, "SQS keeps a message 4 days by default", "the queue's MessageRetentionPeriod")
				break
			}
			age, why := defaultQueueRetention, target.ID+" keeps a message 4 days, SQS's default"
			if v, ok := c.t.Int(target.Prop("MessageRetentionPeriod")); ok {
				age, why = seconds(v), fmt.Sprintf("%s keeps a message %s, its MessageRetentionPeriod", target.ID, duration(seconds(v)))
			}
			longer(age, why, target.ID+"'s MessageRetentionPeriod")
		case kindKinesis, kindDynamoDB:
			age, why := defaultStreamRetention, "a stream keeps a record 24 h"
			if s.kind == kindKinesis && target != nil {
				if h, ok := c.t.Int(target.Prop("RetentionPeriodHours")); ok {
					age, why = time.Duration(h)*time.Hour, fmt.Sprintf("%s keeps a record %dh, its RetentionPeriodHours", target.ID, h)
				}
			}
			if v, ok := c.t.Int(template.Lookup(s.props, "MaximumRecordAgeInSeconds")); ok && v >= 0 && seconds(v) < age {
				age, why = seconds(v), fmt.Sprintf("%s retries a record until MaximumRecordAgeInSeconds, %d", s.name, v)
			}
			longer(age, why, "the MaximumRecordAgeInSeconds of "+s.name)
		}
	}
	if c.async(fn) {
		age, why := defaultMaxEventAge, "Lambda retries an asynchronous event for 6 h by default"
		if v, ok := c.maxEventAge(fn); ok {
			age, why = seconds(v), fmt.Sprintf("Lambda retries an asynchronous event until its MaximumEventAgeInSeconds, %d", v)
		}
		longer(age, why, "EventInvokeConfig.MaximumEventAgeInSeconds")
	}
	return w
}

// async reports whether fn is invoked asynchronously: it has an
// EventInvokeConfig, or an event of an asynchronous type.
func (c *checker) async(fn *template.Function) bool {
	if _, ok := c.eventInvokeConfig(fn); ok {
		return true
	}
	_, events := template.Entries(fn.Resource.Prop("Events"))
	return slices.ContainsFunc(events, func(ev *yaml.Node) bool {
		return slices.Contains(asyncEvents, scalar(template.Lookup(ev, "Type")))
	})
}

// maxEventAge returns fn's MaximumEventAgeInSeconds, when set.
func (c *checker) maxEventAge(fn *template.Function) (int, bool) {
	cfg, _ := c.eventInvokeConfig(fn)
	return c.t.Int(template.Lookup(cfg, "MaximumEventAgeInSeconds"))
}

// eventInvokeConfig returns the settings of fn's asynchronous
// invocations: its (SAM) EventInvokeConfig, or the Properties of an
// AWS::Lambda::EventInvokeConfig naming it.
func (c *checker) eventInvokeConfig(fn *template.Function) (*yaml.Node, bool) {
	if cfg := fn.Prop("EventInvokeConfig"); cfg != nil && fn.Type == template.ServerlessFunction {
		return cfg, true
	}
	for _, id := range c.t.IDs {
		r := c.t.Resource(id)
		if r.Type != "AWS::Lambda::EventInvokeConfig" {
			continue
		}
		if target, _ := c.t.Ref(r.Prop("FunctionName")); target == fn.ID {
			return r.Properties, true
		}
	}
	return nil, false
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

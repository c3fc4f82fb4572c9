package lint

import (
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
)

// depthMetrics are the SQS metrics whose alarm tells that a queue holds
// messages.
var depthMetrics = []string{"ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage"}

// checkDeadLetterAlarms finds the queues of the template where failed
// events are set aside, and reports those that no alarm watches: a
// message there is an event that was never processed, and nobody learns
// of it otherwise.
func (c *checker) checkDeadLetterAlarms(sources []*source) {
	dlqs := map[string]bool{}
	add := func(n *yaml.Node) {
		if q := c.queue(n); q != "" {
			dlqs[q] = true
		}
	}
	for _, id := range c.t.IDs {
		r := c.t.Resource(id)
		switch r.Type {
		case "AWS::SQS::Queue":
			add(r.Prop("RedrivePolicy", "deadLetterTargetArn"))
		case "AWS::Lambda::EventInvokeConfig":
			add(r.Prop("DestinationConfig", "OnFailure", "Destination"))
		}
		if fn := c.t.Function(id); fn != nil {
			add(fn.Prop("DeadLetterQueue", "TargetArn"))  // SAM
			add(fn.Prop("DeadLetterConfig", "TargetArn")) // Lambda
			add(fn.Prop("EventInvokeConfig", "DestinationConfig", "OnFailure", "Destination"))
		}
	}
	for _, s := range sources {
		add(template.Lookup(s.props, "DestinationConfig", "OnFailure", "Destination"))
	}
	for _, id := range c.t.IDs {
		if dlqs[id] && !c.alarmed(id) {
			c.add(id, RuleDeadLetterAlarm,
				"add an AWS::CloudWatch::Alarm on Namespace AWS/SQS, MetricName ApproximateNumberOfMessagesVisible, Dimensions [{Name: QueueName, Value: !GetAtt "+id+".QueueName}], Statistic Maximum, Threshold 0, ComparisonOperator GreaterThanThreshold.",
				"it holds the events that failed every try, and no alarm watches it: they wait there, unprocessed, until someone happens to look, or their retention ends.")
		}
	}
}

// alarmed reports whether an alarm of the template watches the depth of
// queue, as a metric of its own or inside metric math.
func (c *checker) alarmed(queue string) bool {
	for _, id := range c.t.IDs {
		r := c.t.Resource(id)
		if r.Type != "AWS::CloudWatch::Alarm" {
			continue
		}
		if c.watches(r.Properties, queue) {
			return true
		}
		for _, m := range template.Items(r.Prop("Metrics")) {
			if c.watches(template.Lookup(m, "MetricStat", "Metric"), queue) {
				return true
			}
		}
	}
	return false
}

// watches reports whether metric (Namespace, MetricName, Dimensions) is a
// depth metric of queue.
func (c *checker) watches(metric *yaml.Node, queue string) bool {
	if ns, _ := c.t.String(template.Lookup(metric, "Namespace")); ns != "AWS/SQS" {
		return false
	}
	if name, _ := c.t.String(template.Lookup(metric, "MetricName")); !slices.Contains(depthMetrics, name) {
		return false
	}
	for _, d := range template.Items(template.Lookup(metric, "Dimensions")) {
		if name, _ := c.t.String(template.Lookup(d, "Name")); name != "QueueName" {
			continue
		}
		value := template.Lookup(d, "Value")
		if id, _ := c.t.Ref(value); id == queue {
			return true
		}
		// A queue named in the template can be named so in the alarm.
		name, ok := c.t.String(c.t.Resource(queue).Prop("QueueName"))
		if v, _ := c.t.String(value); ok && v == name {
			return true
		}
	}
	return false
}

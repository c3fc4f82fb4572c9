// Package lint checks a SAM template against the delivery rules that an
// idempotent function depends on (docs/operations.md explains each one):
// retries must reach the function while its records still live, failures
// must be reported per record and set aside in a dead-letter queue that
// someone watches, and the table must keep, expire and guard the records.
//
// It reads only the template: a resource that the template refers to but
// does not define (a queue by its ARN, say) is not checked, except that
// its AWS defaults are assumed where a rule needs a value.
package lint

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
)

// The rules, as findings name them.
const (
	// RuleVisibilityTimeout: an SQS source queue's visibility timeout is
	// under six times the function's timeout.
	RuleVisibilityTimeout = "visibility-timeout"
	// RuleDeadLetterQueue: an SQS source queue has no dead-letter queue.
	RuleDeadLetterQueue = "dead-letter-queue"
	// RuleMaxReceiveCount: an SQS source queue's maxReceiveCount is not
	// [MaxReceiveCount].
	RuleMaxReceiveCount = "max-receive-count"
	// RuleBatchItemFailures: an SQS, Kinesis or DynamoDB Streams source
	// without ReportBatchItemFailures.
	RuleBatchItemFailures = "batch-item-failures"
	// RuleDeadLetterAlarm: a dead-letter queue (or an on-failure
	// destination queue) without an alarm on its messages.
	RuleDeadLetterAlarm = "dead-letter-alarm"
	// RuleTableTTL: an idempotency table without TTL on the expiry
	// attribute.
	RuleTableTTL = "table-ttl"
	// RuleGlobalTable: an idempotency table that is a global table in
	// multi-Region eventual consistency.
	RuleGlobalTable = "global-table"
	// RuleTableAccess: a function without exactly the access the store
	// needs to its table.
	RuleTableAccess = "table-access"
	// RuleRecordExpiry: a function's records expire before the last retry
	// of an event can arrive.
	RuleRecordExpiry = "record-expiry"
	// RuleKeyPath: an idempotent function whose key path is not set.
	RuleKeyPath = "key-path"
	// RuleSettings: a function's idempotency settings cannot be read, or
	// the function would refuse them at cold start.
	RuleSettings = "settings"
)

// MaxReceiveCount is the maxReceiveCount the docs recommend for a queue
// whose consumer reports failures per message (docs/batch.md): a poison
// message costs three tries, a transient failure gets two more.
const MaxReceiveCount = 3

// visibilityFactor is AWS's advice for a Lambda event source: the queue's
// visibility timeout at least six times the function's timeout.
const visibilityFactor = 6

// ExpiryAttr is the attribute where the DynamoDB store writes a record's
// expiry (dynamo.Options.ExpiryAttr's default): the table's TTL must be
// on it.
const ExpiryAttr = "expiration"

// Finding is one breach of a rule by one resource.
type Finding struct {
	// Resource is the logical ID of the resource to change.
	Resource string
	Rule     string
	// Problem says what is wrong and what it costs; Fix what to change.
	Problem, Fix string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: %s: %s Fix: %s", f.Resource, f.Rule, f.Problem, f.Fix)
}

// Check returns the template's breaches of the rules, in the order of the
// resources in the template, each rule's once per resource and cause.
func Check(t *template.Template) []Finding {
	c := &checker{t: t}
	sources := c.sources()
	for _, s := range sources {
		c.checkSource(s)
	}
	c.checkDeadLetterAlarms(sources)
	for _, fn := range t.Functions() {
		if fn.Idempotent() {
			c.checkIdempotent(fn, sources)
		}
	}
	order := map[string]int{}
	for i, id := range t.IDs {
		order[id] = i
	}
	slices.SortStableFunc(c.findings, func(a, b Finding) int {
		return cmp.Compare(order[a.Resource], order[b.Resource])
	})
	return c.findings
}

// checker collects the findings of one template.
type checker struct {
	t        *template.Template
	findings []Finding
	seen     map[Finding]bool // a table shared by two functions is one finding
}

func (c *checker) add(resource, rule, fix, format string, args ...any) {
	f := Finding{Resource: resource, Rule: rule, Problem: fmt.Sprintf(format, args...), Fix: fix}
	if c.seen[f] {
		return
	}
	if c.seen == nil {
		c.seen = map[Finding]bool{}
	}
	c.seen[f] = true
	c.findings = append(c.findings, f)
}

// checkIdempotent checks a function that keeps idempotency records: its
// key path, its table, and its records' expiry against its retries.
func (c *checker) checkIdempotent(fn *template.Function, sources []*source) {
	w, err := starts(fn)
	if err != nil {
		c.add(fn.ID, RuleSettings, settingsFix(err), "%v.", err)
		return
	}
	// A function wrapper's argument is not the event but what its code
	// builds from it: keyed whole, it holds only what the code put there.
	_, wrapper := w.Setting("WrapFunc")
	if key, _ := w.Setting("EventKey"); key.Source == handler.DefaultSource && !wrapper {
		c.add(fn.ID, RuleKeyPath,
			fmt.Sprintf("set %s in its Environment.Variables to the path of what identifies a request (such as powertools_json(body).order_id); when its code sets the key with WithEventKey or WrapFunc, declare it in Metadata.%s.EventKey.", handler.EventKeyEnv, template.MetadataKey),
			"it keeps idempotency records but sets no key path, so the key is the whole event, which holds what differs between two deliveries of one request (a message ID, a receipt, a timestamp): no duplicate is ever recognized.")
	}
	if table := fn.Table(); table != "" {
		c.checkTable(table)
		c.checkAccess(fn, table)
	}
	if r := c.retryWindow(fn, sources); r.age > w.ExpiresAfter {
		c.add(fn.ID, RuleRecordExpiry,
			fmt.Sprintf("set %s to at least %s (or Metadata.%s.ExpiresAfter, when its code sets the expiry), or shorten %s.", handler.ExpiresAfterEnv, duration(r.age), template.MetadataKey, r.fix),
			"its records expire after %s, but a retry can arrive up to %s after the first delivery (%s): a retry after that runs the effect again.",
			duration(w.ExpiresAfter), duration(r.age), r.why)
	}
}

// starts returns fn's idempotent wrapper, built by the library's code
// from what its Metadata declares and its environment in the template, or
// what keeps it from being built: at cold start (a malformed key
// expression, say, a *idempotency.ConfigError), or in the declaration (a
// *handler.DeclarationError). Lambda names every function: its logical ID
// stands in for a name the template does not give.
func starts(fn *template.Function) (*handler.Wrapper, error) {
	f, err := handler.FromTemplate(fn)
	if err != nil {
		return nil, err
	}
	if f.Env[handler.FunctionNameEnv].Value == "" {
		f.Env[handler.FunctionNameEnv] = handler.Setting{Value: fn.ID, Source: "its logical ID, for its name"}
	}
	return handler.New(f, time.Now)
}

// settingsFix is the fix of a function whose wrapper cannot be built
// with err.
func settingsFix(err error) string {
	if _, ok := errors.AsType[*handler.DeclarationError](err); ok {
		return fmt.Sprintf("correct Metadata.%s, which declares what the function's code gives: the function itself never reads it, but inspect and lint would compute other keys and verdicts than the function's.", template.MetadataKey)
	}
	return "correct the setting: the function fails at cold start with this *idempotency.ConfigError, or inspect would compute other keys than it does."
}

// duration writes d in the largest whole unit, as a Go duration that
// POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER accepts: 96h, 90m, 45s.
func duration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

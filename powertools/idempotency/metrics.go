package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// metricNames names the count of each outcome: a metric has 1 in the
// document of an invocation that ended so. docs/operations.md says what
// each means.
var metricNames = map[Outcome]string{
	OutcomeNew:          "IdempotencyNew",
	OutcomeReplayed:     "IdempotencyReplayed",
	OutcomeInProgress:   "IdempotencyInProgress",
	OutcomeConflict:     "IdempotencyConflict",
	OutcomeReleased:     "IdempotencyReleased",
	OutcomeUncertain:    "IdempotencyUncertain",
	OutcomeLeaseLost:    "IdempotencyLeaseLost",
	OutcomeAbandoned:    "IdempotencyAbandoned",
	OutcomeStoreError:   "IdempotencyStoreError",
	OutcomeNotStored:    "IdempotencyNotStored",
	OutcomeInvalidEvent: "IdempotencyInvalidEvent",
	OutcomeMissingKey:   "IdempotencyMissingKey",
	OutcomeNoKey:        "IdempotencyNoKey",
}

// The other metrics, and the dimensions of all. The names start with
// Idempotency because the namespace is often the function's own, shared
// with its other metrics.
const (
	// metricDuration is Observation.Duration: the time in the
	// middleware, the handler's included.
	metricDuration = "IdempotencyInvocationDuration"
	// metricHandler is Observation.HandlerDuration, when the handler ran.
	metricHandler = "IdempotencyHandlerDuration"
	// metricReplayAge is, for a replay, the time since the response was
	// stored.
	metricReplayAge = "IdempotencyReplayAge"

	dimensionFunction  = "FunctionName"
	dimensionKeyPrefix = "KeyPrefix"

	// defaultMetricsNamespace is the namespace of Powertools for AWS
	// Lambda (TypeScript) when none is set.
	defaultMetricsNamespace = "default_namespace"
)

// WithMetrics writes to w, after each invocation, one CloudWatch embedded
// metric format (EMF) document: a line of JSON, written with one Write
// call, from which CloudWatch Logs makes metrics when w is the function's
// standard output. The document counts the invocation under its outcome
// (IdempotencyNew, IdempotencyReplayed, IdempotencyInProgress, ...: one
// metric per [Outcome], see docs/operations.md) and gives, in
// milliseconds, its time in the middleware, the handler's included
// (IdempotencyInvocationDuration), the handler's own time when it ran
// (IdempotencyHandlerDuration), and for a replay the age of the replayed
// response (IdempotencyReplayAge). Its dimensions are FunctionName
// (AWS_LAMBDA_FUNCTION_NAME, left out when unset) and KeyPrefix; never the
// key, each of whose values would be a metric of its own. Its namespace is
// [WithMetricsNamespace]'s.
//
// Writes to w are made one at a time, so w need not be safe for concurrent
// use; a failed write is logged as a warning. A function wrapper writes a
// document per call. nil turns metrics off.
//
// Default: for a handler, os.Stdout when POWERTOOLS_IDEMPOTENCY_METRICS is
// true (1, t, true, y, yes or on, in any case); off when it is false or
// unset, or when POWERTOOLS_METRICS_DISABLED, Powertools' switch for all
// its metrics, is true. Only the option given outright wins over
// POWERTOOLS_METRICS_DISABLED.
func WithMetrics(w io.Writer) Option {
	return func(o *options) { o.metrics = w; o.set("WithMetrics") }
}

// WithMetricsNamespace sets the CloudWatch namespace of the metrics of
// [WithMetrics]: 1 to 255 letters, digits, spaces and . - _ / # :, not
// starting with "AWS/". Another is a [*ConfigError] when metrics are on.
//
// Default: POWERTOOLS_METRICS_NAMESPACE, the namespace of the Metrics
// utility of Powertools for AWS Lambda, else "default_namespace", as in its
// TypeScript version.
func WithMetricsNamespace(namespace string) Option {
	return func(o *options) { o.namespace = namespace; o.set("WithMetricsNamespace") }
}

// metricsWriter writes an engine's EMF documents.
type metricsWriter struct {
	namespace  string
	dimensions [][]string        // the one dimension set
	members    map[string]string // the dimensions' values
	log        func() *slog.Logger

	mu sync.Mutex // one Write at a time
	w  io.Writer
}

// newMetricsWriter checks the namespace and the dimensions' values, so
// that CloudWatch will not refuse the documents. fn is the function's name,
// or "".
func (e *engine) newMetricsWriter(w io.Writer, ns, fn string) (*metricsWriter, error) {
	if err := checkNamespace(ns); err != nil {
		return nil, err
	}
	m := &metricsWriter{namespace: ns, members: map[string]string{}, log: e.log, w: w}
	var names []string
	if fn != "" {
		names = append(names, dimensionFunction)
		m.members[dimensionFunction] = fn
	}
	names = append(names, dimensionKeyPrefix)
	m.members[dimensionKeyPrefix] = e.prefix
	for _, name := range names {
		if v := m.members[name]; strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > 1024 {
			return nil, fmt.Errorf("the %s dimension %q is not 1 to 1,024 characters with one not white space, as CloudWatch requires", name, v)
		}
	}
	m.dimensions = [][]string{names}
	return m, nil
}

// checkNamespace applies CloudWatch's rules for a namespace.
func checkNamespace(ns string) error {
	const allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-/#:"
	switch {
	case ns == "" || len(ns) > 255:
		return fmt.Errorf("namespace %q is not 1 to 255 characters", ns)
	case strings.TrimLeft(ns, allowed) != "":
		return fmt.Errorf("namespace %q has characters other than letters, digits, space and . - _ / # :", ns)
	case strings.TrimSpace(ns) == "":
		return errors.New("namespace is only white space")
	case strings.HasPrefix(ns, "AWS/"):
		return fmt.Errorf("namespace %q starts with AWS/, which is reserved for AWS services", ns)
	}
	return nil
}

// The EMF document's metadata, as the specification names its members.
type (
	emfMetadata struct {
		Timestamp         int64 // milliseconds since the Unix epoch
		CloudWatchMetrics []emfDirective
	}
	emfDirective struct {
		Namespace  string
		Dimensions [][]string
		Metrics    []emfMetric
	}
	emfMetric struct{ Name, Unit string }
)

// observe writes the document of an invocation that ended at now.
func (m *metricsWriter) observe(ctx context.Context, o Observation, now time.Time) {
	doc := make(map[string]any, len(m.members)+4)
	var defs []emfMetric
	add := func(name, unit string, value float64) {
		defs = append(defs, emfMetric{Name: name, Unit: unit})
		doc[name] = value
	}
	if name, ok := metricNames[o.Outcome]; ok {
		add(name, "Count", 1)
	}
	add(metricDuration, "Milliseconds", milliseconds(o.Duration))
	if o.HandlerDuration > 0 {
		add(metricHandler, "Milliseconds", milliseconds(o.HandlerDuration))
	}
	if o.Outcome == OutcomeReplayed && !o.CompletedAt.IsZero() {
		// The response may have been stored by another execution
		// environment, whose clock can be a little ahead of ours.
		add(metricReplayAge, "Milliseconds", milliseconds(max(now.Sub(o.CompletedAt), 0)))
	}
	for name, v := range m.members {
		doc[name] = v
	}
	doc["_aws"] = emfMetadata{Timestamp: now.UnixMilli(), CloudWatchMetrics: []emfDirective{
		{Namespace: m.namespace, Dimensions: m.dimensions, Metrics: defs},
	}}
	line, err := json.Marshal(doc)
	if err == nil {
		m.mu.Lock()
		_, err = m.w.Write(append(line, '\n'))
		m.mu.Unlock()
	}
	if err != nil {
		m.log().WarnContext(ctx, "idempotency: could not write the metrics of an invocation", "outcome", o.Outcome, "error", err)
	}
}

// milliseconds is d in milliseconds, to the nanosecond.
func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

package idempotency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/emftest"
	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestMetricsOutcomes runs a real handler over the in-memory store through
// every outcome with the metrics and the outcome log on, next to an
// observer of the user's: each invocation writes one EMF document, which
// the specification's rules accept, counting its outcome under its name,
// with the function and key prefix as dimensions and never the key; it
// logs one record at the outcome's level; and the user's observer is told
// too.
func TestMetricsOutcomes(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "orders-fn")
	errDeclined := errors.New("declined")
	handler := func(_ context.Context, o order) (receipt, error) {
		switch o.Amount {
		case -1:
			return receipt{}, errDeclined
		case -2:
			return receipt{}, idempotency.Uncertain(errDeclined)
		case -3:
			return receipt{OrderID: strings.Repeat("x", 2000)}, nil
		}
		return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
	}
	live := func(status idempotency.Status) func(*idempotencytest.Store, time.Time) idempotency.Store {
		return func(s *idempotencytest.Store, now time.Time) idempotency.Store {
			s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: status, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), LeaseToken: "other"})
			return s
		}
	}
	tests := []struct {
		event  string
		seed   []string // sent first; their documents are not the test's
		opts   []idempotency.Option
		store  func(*idempotencytest.Store, time.Time) idempotency.Store
		want   idempotency.Outcome
		metric string
		level  slog.Level
	}{
		{event: `{"order_id":"o-1","amount":1}`, want: idempotency.OutcomeNew, metric: "IdempotencyNew", level: slog.LevelInfo},
		{event: `{"order_id":"o-1","amount":1}`, seed: []string{`{"order_id":"o-1","amount":1}`},
			want: idempotency.OutcomeReplayed, metric: "IdempotencyReplayed", level: slog.LevelInfo},
		{event: `{"order_id":"o-1","amount":1}`, store: live(idempotency.StatusInProgress),
			want: idempotency.OutcomeInProgress, metric: "IdempotencyInProgress", level: slog.LevelWarn},
		{event: `{"order_id":"o-1","amount":2}`, seed: []string{`{"order_id":"o-1","amount":1}`}, opts: []idempotency.Option{idempotency.WithPayloadValidation("amount")},
			want: idempotency.OutcomeConflict, metric: "IdempotencyConflict", level: slog.LevelWarn},
		{event: `{"order_id":"o-1","amount":-1}`, want: idempotency.OutcomeReleased, metric: "IdempotencyReleased", level: slog.LevelWarn},
		{event: `{"order_id":"o-1","amount":-2}`, want: idempotency.OutcomeUncertain, metric: "IdempotencyUncertain", level: slog.LevelWarn},
		{event: `{"order_id":"o-1","amount":1}`, store: func(s *idempotencytest.Store, _ time.Time) idempotency.Store {
			return &failingStore{Store: s, fail: map[string]error{"complete": fmt.Errorf("fake: %w", idempotency.ErrLeaseLost)}}
		}, want: idempotency.OutcomeLeaseLost, metric: "IdempotencyLeaseLost", level: slog.LevelError},
		{event: `{"order_id":"o-1","amount":1}`, opts: []idempotency.Option{idempotency.WithAbandonPolicy(idempotency.AbandonBlock)},
			store: func(s *idempotencytest.Store, now time.Time) idempotency.Store {
				s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour),
					Deadline: now.Add(-time.Minute), LeaseToken: "dead"})
				return s
			}, want: idempotency.OutcomeAbandoned, metric: "IdempotencyAbandoned", level: slog.LevelError},
		{event: `{"order_id":"o-1","amount":1}`, store: func(s *idempotencytest.Store, _ time.Time) idempotency.Store {
			return &failingStore{Store: s, fail: map[string]error{"acquire": errors.New("unreachable")}}
		}, want: idempotency.OutcomeStoreError, metric: "IdempotencyStoreError", level: slog.LevelError},
		{event: `{"order_id":"o-1","amount":-3}`, seed: []string{`{"order_id":"o-1","amount":-3}`}, store: func(s *idempotencytest.Store, _ time.Time) idempotency.Store {
			s.SetMaxItemSize(1000)
			return s
		}, want: idempotency.OutcomeNotStored, metric: "IdempotencyNotStored", level: slog.LevelWarn},
		{event: `{"order_id":"o-1","ORDER_ID":"o-2"}`, want: idempotency.OutcomeInvalidEvent, metric: "IdempotencyInvalidEvent", level: slog.LevelWarn},
		{event: `{"amount":1}`, opts: []idempotency.Option{idempotency.WithKeyRequired(true)},
			want: idempotency.OutcomeMissingKey, metric: "IdempotencyMissingKey", level: slog.LevelWarn},
		{event: `{"amount":1}`, want: idempotency.OutcomeNoKey, metric: "IdempotencyNoKey", level: slog.LevelInfo},
		{event: `{"order_id":"o-1","amount":"one"}`, want: idempotency.OutcomeUndecodableEvent, metric: "IdempotencyUndecodableEvent", level: slog.LevelWarn},
	}
	for _, tc := range tests {
		t.Run(string(tc.want), func(t *testing.T) {
			clock := newFakeClock()
			mem := idempotencytest.NewStore()
			var store idempotency.Store = mem
			if tc.store != nil {
				store = tc.store(mem, clock.Now())
			}
			out, logs := &writes{}, &fake.Log{}
			var observed []idempotency.Observation
			opts := append([]idempotency.Option{
				idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { observed = append(observed, o) }),
				idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithClock(clock.Now),
				idempotency.WithLogger(slog.New(logs)),
				idempotency.WithCloudWatchMetrics(out, "Shop/Orders"), idempotency.WithOutcomeLog(true),
			}, tc.opts...)
			h := idempotency.Wrap(store, handler, opts...)
			for _, ev := range tc.seed {
				h.Invoke(context.Background(), []byte(ev))
			}
			clock.Advance(time.Minute)
			out.reset()
			logs.Reset()
			observed = nil

			_, err := h.Invoke(context.Background(), []byte(tc.event))

			if len(observed) != 1 || observed[0].Outcome != tc.want || observed[0].Err != err {
				t.Fatalf("the user's observer was told %+v, want one %s with the caller's error %v", observed, tc.want, err)
			}
			docs := out.lines(t)
			if len(docs) != 1 {
				t.Fatalf("%d documents written, want 1", len(docs))
			}
			doc := checkDocument(t, docs[0], clock.Now())
			want := []string{tc.metric, "IdempotencyInvocationDuration"}
			if tc.want == idempotency.OutcomeReplayed {
				want = append(want, "IdempotencyReplayAge")
				if age := doc.values["IdempotencyReplayAge"]; age != float64(time.Minute/time.Millisecond) {
					t.Errorf("IdempotencyReplayAge = %v, want 60000: the response was stored a minute before", age)
				}
			}
			if !equal(doc.metricNames(), want) || doc.values[tc.metric] != 1 {
				t.Errorf("metrics %v with %s = %v; want %v, with %s = 1", doc.metricNames(), tc.metric, doc.values[tc.metric], want, tc.metric)
			}
			if doc.namespace != "Shop/Orders" || !equal(doc.dimensions, []string{"FunctionName", "KeyPrefix"}) ||
				doc.strings["FunctionName"] != "orders-fn" || doc.strings["KeyPrefix"] != prefix {
				t.Errorf("namespace %q, dimensions %v, values %v; want Shop/Orders, [FunctionName KeyPrefix], orders-fn and %s", doc.namespace, doc.dimensions, doc.strings, prefix)
			}
			if hash := strings.TrimPrefix(keyOf("o-1"), prefix+"#"); bytes.Contains(docs[0], []byte(hash)) {
				t.Errorf("the document holds the key's hash: %s", docs[0])
			}

			var records []fake.Entry
			for _, e := range logs.Entries() {
				if e.Message == "idempotency: invocation" {
					records = append(records, e)
				}
			}
			if len(records) != 1 {
				t.Fatalf("%d outcome records logged, want 1", len(records))
			}
			r := records[0]
			if r.Level != tc.level || r.Attr("outcome") != string(tc.want) || r.Attr("key_prefix") != prefix || r.Attr("key") != observed[0].Key {
				t.Errorf("logged %+v, want level %v, outcome %s, key_prefix %s, key %q", r, tc.level, tc.want, prefix, observed[0].Key)
			}
			if _, ok := r.Attrs["error"]; ok != (err != nil) {
				t.Errorf("logged error %v for the caller's error %v", r.Attrs["error"], err)
			}
		})
	}
}

// TestMetricsValues checks the durations: the time in the middleware, the
// handler's included, and the age of a replayed response, on the wrapper's
// clock.
func TestMetricsValues(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	out := &writes{}
	h := idempotency.Wrap(idempotencytest.NewStore(), func(_ context.Context, o order) (receipt, error) {
		clock.Advance(1500 * time.Millisecond)
		return receipt{OrderID: o.OrderID}, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithClock(clock.Now), idempotency.WithCloudWatchMetrics(out, ""))
	h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	first := clock.Now()
	clock.Advance(90 * time.Second)
	h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	docs := out.lines(t)
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2", len(docs))
	}
	newDoc, replay := checkDocument(t, docs[0], first), checkDocument(t, docs[1], clock.Now())
	if d := newDoc.values["IdempotencyInvocationDuration"]; d != 1500 {
		t.Errorf("first call: IdempotencyInvocationDuration = %v, want 1500", d)
	}
	if d, age := replay.values["IdempotencyInvocationDuration"], replay.values["IdempotencyReplayAge"]; d != 0 || age != 90000 {
		t.Errorf("replay: IdempotencyInvocationDuration = %v, IdempotencyReplayAge = %v; want 0 and 90000", d, age)
	}
	if newDoc.timestamp != first.UnixMilli() || replay.timestamp != clock.Now().UnixMilli() {
		t.Errorf("timestamps %d and %d, want %d and %d: the end of each invocation in milliseconds", newDoc.timestamp, replay.timestamp, first.UnixMilli(), clock.Now().UnixMilli())
	}
	// Outside Lambda there is no function name: the dimension is left
	// out rather than empty, which CloudWatch would refuse.
	if !equal(newDoc.dimensions, []string{"KeyPrefix"}) {
		t.Errorf("dimensions %v without AWS_LAMBDA_FUNCTION_NAME, want [KeyPrefix]", newDoc.dimensions)
	}
}

// TestMetricsConcurrent has many invocations at once write to a writer that
// is not safe for concurrent use: each gets one whole document, in one
// Write, and the race detector sees no two at once.
func TestMetricsConcurrent(t *testing.T) {
	t.Parallel()
	out := &unsafeWrites{}
	h := idempotency.Wrap(idempotencytest.NewStore(), func(_ context.Context, o order) (receipt, error) {
		return receipt{OrderID: o.OrderID}, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithCloudWatchMetrics(out, ""))
	const goroutines, each = 8, 25
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				// Every key twice in a row, new then replayed, and each
				// goroutine's keys its own: a key shared between two
				// goroutines could meet the other's lease (in_progress).
				h.Invoke(context.Background(), fmt.Appendf(nil, `{"order_id":"o-%d-%d"}`, g, i/2))
			}
		})
	}
	wg.Wait()
	if len(out.calls) != goroutines*each {
		t.Fatalf("%d writes for %d invocations", len(out.calls), goroutines*each)
	}
	counts := map[string]int{}
	for _, call := range out.calls {
		line, ok := bytes.CutSuffix(call, []byte("\n"))
		if !ok || bytes.Contains(line, []byte("\n")) {
			t.Fatalf("a write is not one line: %q", call)
		}
		for _, name := range checkDocument(t, line, time.Now()).metricNames() {
			counts[name]++
		}
	}
	if counts["IdempotencyNew"]+counts["IdempotencyReplayed"] != goroutines*each || counts["IdempotencyInvocationDuration"] != goroutines*each {
		t.Errorf("counts %v, want one outcome and one duration per invocation", counts)
	}
}

// TestMetricsConfig checks that a bad setting fails the build, naming the
// option or variable, and only when it is used.
func TestMetricsConfig(t *testing.T) {
	withPrefix := idempotency.WithKeyPrefix(prefix)
	metricsOn := idempotency.WithCloudWatchMetrics(&writes{}, "")
	namespace := func(ns string) idempotency.Option { return idempotency.WithCloudWatchMetrics(&writes{}, ns) }
	configErr := func(name string) func(error) bool {
		return func(err error) bool {
			ce, ok := errors.AsType[*idempotency.ConfigError](err)
			return ok && ce.Name == name
		}
	}
	ok := func(err error) bool { return err == nil }
	tests := []struct {
		name string
		env  map[string]string
		opts []idempotency.Option
		want func(error) bool
	}{
		{"a namespace of AWS", nil, []idempotency.Option{withPrefix, namespace("AWS/Lambda")}, configErr("WithCloudWatchMetrics")},
		{"a namespace of 256 characters", nil, []idempotency.Option{withPrefix, namespace(strings.Repeat("n", 256))}, configErr("WithCloudWatchMetrics")},
		{"an empty namespace in the environment", map[string]string{"POWERTOOLS_METRICS_NAMESPACE": ""}, []idempotency.Option{withPrefix, metricsOn}, ok},
		{"a namespace with a comma in the environment", map[string]string{"POWERTOOLS_METRICS_NAMESPACE": "a,b"}, []idempotency.Option{withPrefix, metricsOn}, configErr("POWERTOOLS_METRICS_NAMESPACE")},
		{"a bad namespace, metrics off", nil, []idempotency.Option{withPrefix, idempotency.WithCloudWatchMetrics(nil, "AWS/Lambda")}, ok},
		{"a bad namespace in the environment, overridden", map[string]string{"POWERTOOLS_METRICS_NAMESPACE": "a,b"}, []idempotency.Option{withPrefix, namespace("Shop")}, ok},
		{"a bad namespace in the environment, metrics in WithDefaults", map[string]string{"POWERTOOLS_METRICS_NAMESPACE": "a,b"}, []idempotency.Option{withPrefix, idempotency.WithDefaults(namespace("Shop"))}, configErr("POWERTOOLS_METRICS_NAMESPACE")},
		{"a key prefix too long for a dimension", nil, []idempotency.Option{metricsOn, idempotency.WithKeyPrefix(strings.Repeat("p", 1025))}, configErr("WithCloudWatchMetrics")},
		{"metrics not a boolean", map[string]string{"POWERTOOLS_IDEMPOTENCY_METRICS": "maybe"}, []idempotency.Option{withPrefix}, configErr("POWERTOOLS_IDEMPOTENCY_METRICS")},
		{"metrics not a boolean, overridden", map[string]string{"POWERTOOLS_IDEMPOTENCY_METRICS": "maybe"}, []idempotency.Option{withPrefix, idempotency.WithCloudWatchMetrics(nil, "")}, ok},
		{"metrics disabled not a boolean", map[string]string{"POWERTOOLS_METRICS_DISABLED": "maybe"}, []idempotency.Option{withPrefix}, configErr("POWERTOOLS_METRICS_DISABLED")},
		{"the outcome log not a boolean", map[string]string{"POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME": "maybe"}, []idempotency.Option{withPrefix}, configErr("POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME")},
		// A disabled handler needs no prefix, with metrics on or not.
		{"disabled, without a prefix", map[string]string{"POWERTOOLS_IDEMPOTENCY_METRICS": "true", "POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME": "true", "POWERTOOLS_IDEMPOTENCY_DISABLED": "true", "POWERTOOLS_DEV": "true"}, nil, ok},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := idempotency.New(idempotencytest.NewStore(), func(context.Context, order) (receipt, error) { return receipt{}, nil }, tc.opts...)
			if !tc.want(err) {
				t.Errorf("New = %v (%T)", err, err)
			}
		})
	}
}

// writes records what is written, safe for concurrent use.
type writes struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *writes) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
}

// lines returns the documents written, each of which must be a whole line.
func (w *writes) lines(t *testing.T) [][]byte {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > 0 && !bytes.HasSuffix(w.buf.Bytes(), []byte("\n")) {
		t.Fatalf("the output does not end in a newline: %q", w.buf.String())
	}
	return emftest.Documents(w.buf.Bytes())
}

// unsafeWrites records each Write call, without a lock.
type unsafeWrites struct{ calls [][]byte }

func (w *unsafeWrites) Write(p []byte) (int, error) {
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

// document is what a test reads from an EMF document the package wrote.
type document struct {
	timestamp  int64
	namespace  string
	dimensions []string
	metrics    []struct{ Name, Unit string }
	values     map[string]float64
	strings    map[string]string
}

func (d document) metricNames() []string {
	var names []string
	for _, m := range d.metrics {
		names = append(names, m.Name)
	}
	return names
}

// checkDocument validates line, written at now, against the
// specification's rules and the package's own: one directive with one
// dimension set, each count in Count and each time in Milliseconds.
func checkDocument(t *testing.T, line []byte, now time.Time) document {
	t.Helper()
	if err := emftest.Validate(line, now); err != nil {
		t.Fatalf("invalid EMF document %s:\n%v", line, err)
	}
	var raw struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
	}
	var members map[string]any
	if err := json.Unmarshal(line, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(line, &members); err != nil {
		t.Fatal(err)
	}
	if n := len(raw.AWS.CloudWatchMetrics); n != 1 || len(raw.AWS.CloudWatchMetrics[0].Dimensions) != 1 {
		t.Fatalf("%s: want one directive with one dimension set", line)
	}
	dir := raw.AWS.CloudWatchMetrics[0]
	d := document{timestamp: raw.AWS.Timestamp, namespace: dir.Namespace, dimensions: dir.Dimensions[0], metrics: dir.Metrics,
		values: map[string]float64{}, strings: map[string]string{}}
	for _, m := range dir.Metrics {
		want := "Milliseconds"
		if !strings.HasSuffix(m.Name, "Duration") && !strings.HasSuffix(m.Name, "Age") {
			want = "Count"
		}
		if m.Unit != want {
			t.Errorf("%s: metric %s in %s, want %s", line, m.Name, m.Unit, want)
		}
		d.values[m.Name], _ = members[m.Name].(float64)
	}
	for _, name := range d.dimensions {
		d.strings[name], _ = members[name].(string)
	}
	return d
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// emfDirective is the part of an EMF document the dashboard depends on.
type emfDirective struct {
	Namespace  string
	Dimensions [][]string
	Metrics    []struct{ Name, Unit string }
}

// writtenMetrics runs a handler through every outcome the dashboard shows
// (new, replayed, conflict, released, uncertain, in progress, lease lost,
// store error) with metrics on, and returns the metrics its EMF documents
// name, with their directives.
func writtenMetrics(t *testing.T) map[string]emfDirective {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
	var docs bytes.Buffer
	clock := time.Now()
	opts := []idempotency.Option{
		idempotency.WithEventKey("id"),
		idempotency.WithPayloadValidation("v"),
		idempotency.WithCloudWatchMetrics(&docs, "Idempotency"),
		idempotency.WithClock(func() time.Time { return clock }),
		idempotency.WithLease(time.Minute),
		idempotency.WithLogger(discard),
	}
	var h *idempotency.Handler
	h, err := idempotency.New(idempotencytest.NewStore(), func(_ context.Context, ev struct{ ID, Do string }) (string, error) {
		switch ev.Do {
		case "fail":
			return "", errors.New("refused")
		case "uncertain":
			return "", idempotency.Uncertain(errors.New("timeout"))
		case "duplicate":
			// A duplicate while this invocation holds the key.
			h.Invoke(context.Background(), []byte(`{"id":"`+ev.ID+`"}`))
		case "outlive":
			// The lease ends; a duplicate takes the key over and
			// completes it; this invocation's completion then fails.
			clock = clock.Add(2 * time.Minute)
			h.Invoke(context.Background(), []byte(`{"id":"`+ev.ID+`"}`))
		}
		return "ok", nil
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{
		`{"id":"a","v":1}`, `{"id":"a","v":1}`, `{"id":"a","v":2}`,
		`{"id":"b","do":"fail"}`, `{"id":"c","do":"uncertain"}`,
		`{"id":"d","do":"duplicate"}`, `{"id":"e","do":"outlive"}`,
	} {
		h.Invoke(t.Context(), []byte(ev))
	}
	broken, err := idempotency.New(failingStore{}, func(context.Context, struct{}) (string, error) { return "", nil }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	broken.Invoke(t.Context(), []byte(`{"id":"f"}`))

	written := map[string]emfDirective{}
	lines := bufio.NewScanner(&docs)
	for lines.Scan() {
		var doc struct {
			AWS struct{ CloudWatchMetrics []emfDirective } `json:"_aws"`
		}
		if err := json.Unmarshal(lines.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", lines.Bytes(), err)
		}
		for _, d := range doc.AWS.CloudWatchMetrics {
			for _, m := range d.Metrics {
				written[m.Name] = d
			}
		}
	}
	return written
}

// failingStore fails every request.
type failingStore struct{ idempotency.Store }

func (failingStore) Acquire(context.Context, *idempotency.Record, time.Time) (*idempotency.Record, error) {
	return nil, errors.New("throttled")
}

// TestDashboardReadsTheWrittenMetrics: the dashboard and the alarms of
// template.yaml read metrics that the library writes, in the namespace
// and with the dimensions it writes them, and the functions write them
// there.
func TestDashboardReadsTheWrittenMetrics(t *testing.T) {
	written := writtenMetrics(t)
	for _, name := range []string{"IdempotencyNew", "IdempotencyReplayed", "IdempotencyConflict", "IdempotencyReleased", "IdempotencyUncertain", "IdempotencyInProgress", "IdempotencyLeaseLost", "IdempotencyStoreError", "IdempotencyReplayAge"} {
		d, ok := written[name]
		if !ok {
			t.Fatalf("the scenario wrote no %s; it wrote %v", name, written)
		}
		if fmt.Sprint(d.Dimensions) != "[[FunctionName KeyPrefix]]" {
			t.Errorf("%s has dimensions %v, want [[FunctionName KeyPrefix]]", name, d.Dimensions)
		}
	}

	path := filepath.Join(testenv.RepoRoot(), "template.yaml")
	tmpl, err := template.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	root := readYAML(t, path)

	// The handlers write to the namespace the dashboard reads.
	vars := template.Lookup(root, "Globals", "Function", "Environment", "Variables")
	if v := template.Lookup(vars, "POWERTOOLS_IDEMPOTENCY_METRICS"); v == nil || v.Value != "true" {
		t.Errorf("Globals do not set POWERTOOLS_IDEMPOTENCY_METRICS: true")
	}
	if v := template.Lookup(vars, "POWERTOOLS_METRICS_NAMESPACE"); v == nil || v.Tag != "!Ref" || v.Value != "MetricsNamespace" {
		t.Errorf("Globals do not set POWERTOOLS_METRICS_NAMESPACE: !Ref MetricsNamespace")
	}

	// The dashboard: valid JSON once substituted, every ${} a parameter, a
	// resource or a pseudo parameter, every metric one that is written.
	dash := tmpl.Resource("IdempotencyDashboard")
	body, ok := tmpl.Sub(dash.Prop("DashboardBody"))
	if !ok {
		t.Fatal("IdempotencyDashboard's DashboardBody is not an Fn::Sub")
	}
	vars2 := regexp.MustCompile(`\$\{([^}]*)\}`)
	for _, m := range vars2.FindAllStringSubmatch(body, -1) {
		id, _, _ := strings.Cut(m[1], ".")
		if tmpl.Resource(id) == nil && template.Lookup(root, "Parameters", id) == nil && !strings.HasPrefix(id, "AWS::") {
			t.Errorf("the dashboard substitutes ${%s}, which the template does not define", m[1])
		}
	}
	if !json.Valid([]byte(vars2.ReplaceAllString(body, "x"))) {
		t.Errorf("the dashboard body is not JSON once substituted:\n%s", body)
	}
	read := regexp.MustCompile(`MetricName=\\"(\w+)\\"`).FindAllStringSubmatch(body, -1)
	if len(read) < 9 {
		t.Errorf("the dashboard reads %d metrics, want at least 9", len(read))
	}
	for _, m := range read {
		if _, ok := written[m[1]]; !ok {
			t.Errorf("the dashboard reads %s, which the library does not write", m[1])
		}
	}
	if !strings.Contains(body, `{\"${MetricsNamespace}\",FunctionName,KeyPrefix}`) {
		t.Errorf("the dashboard's SEARCH is not on the namespace parameter and the written dimensions")
	}

	// The alarms: each metric written, in the namespace, with the
	// dimensions FunctionName and KeyPrefix of a function whose key
	// prefix is its name.
	alarms := 0
	for _, id := range tmpl.IDs {
		r := tmpl.Resource(id)
		if r.Type != "AWS::CloudWatch::Alarm" || r.Prop("Metrics") == nil {
			continue
		}
		alarms++
		for _, m := range template.Items(r.Prop("Metrics")) {
			metric := template.Lookup(m, "MetricStat", "Metric")
			if metric == nil {
				continue
			}
			if ns := template.Lookup(metric, "Namespace"); ns.Tag != "!Ref" || ns.Value != "MetricsNamespace" {
				t.Errorf("%s: a metric outside the namespace parameter", id)
			}
			name := template.Lookup(metric, "MetricName").Value
			if _, ok := written[name]; !ok {
				t.Errorf("%s alarms on %s, which the library does not write", id, name)
			}
			dims := map[string]string{}
			for _, d := range template.Items(template.Lookup(metric, "Dimensions")) {
				ref, _ := tmpl.Ref(template.Lookup(d, "Value"))
				dims[template.Lookup(d, "Name").Value] = ref
			}
			fn := tmpl.Function(dims["FunctionName"])
			if fn == nil || dims["KeyPrefix"] != fn.ID {
				t.Errorf("%s: dimensions %v, want FunctionName and KeyPrefix of one function", id, dims)
				continue
			}
			f, err := handler.FromTemplate(fn)
			if err != nil {
				t.Fatal(err)
			}
			// Its key, of an event keyed whole without validation,
			// which changes no prefix.
			f.Env[template.FunctionNameEnv] = handler.Setting{Value: "deployed-name", Source: "Lambda"}
			f.Code["EventKey"] = handler.Setting{Value: "", Source: "the test"}
			f.Code["PayloadValidation"] = handler.Setting{Value: "", Source: "the test"}
			w, err := handler.New(f, time.Now)
			var key string
			if err == nil {
				var d *handler.Delivery
				d, err = w.Deliver(t.Context(), []byte(`{"a":1}`), func(context.Context, string) (*idempotency.Record, error) { return nil, nil })
				if err == nil {
					key = d.Key
				}
			}
			if prefix, _ := keyPrefix(key); prefix != "deployed-name" {
				t.Errorf("%s: the key of %s is %q (%v), not of its name: the alarm's KeyPrefix dimension is wrong", id, fn.ID, key, err)
			}
		}
	}
	if alarms < 3 {
		t.Errorf("%d alarms on idempotency metrics, want the uncertain, store error and lease lost ones", alarms)
	}
}

func readYAML(t *testing.T, path string) *yaml.Node {
	t.Helper()
	raw := readFile(t, path)
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

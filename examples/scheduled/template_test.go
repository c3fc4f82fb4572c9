package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/examples/internal/template"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The function's resource in template.yaml.
const logicalID = "ScheduledFunction"

// schedulerTime is what EventBridge Scheduler replaces with a tick's
// scheduled time.
const schedulerTime = "<aws.scheduler.scheduled-time>"

// The defaults of the retry settings that bound how late a retry of a
// tick can come: Scheduler's (and a scheduled rule's) maximum event age,
// and Lambda's for an asynchronous invocation.
const (
	defaultScheduleAge = 24 * time.Hour
	defaultLambdaAge   = 6 * time.Hour
)

// TestTemplate checks the settings of template.yaml's ScheduledFunction
// that only work together, and that its environment builds the function.
// cfn-lint knows the resource schemas, not these rules; and without the
// SAM translator it does not look inside a function's Events at all.
func TestTemplate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	root := parseTemplate(t, raw)
	if template.Lookup(root, "Resources", logicalID) == nil {
		msg := "template.yaml has no " + logicalID + ": the scheduled example is not in the SAM application"
		if testenv.CI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, p := range templateProblems(root) {
		t.Error(p)
	}

	vars, err := template.Variables(logicalID)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	// Set with !Ref in the template.
	t.Setenv("POWERTOOLS_IDEMPOTENCY_TABLE", "records")
	t.Setenv("JOB_SERVICE_URL", "https://jobs.example.com")
	t.Setenv("AWS_REGION", "us-east-1")
	if _, err := newAppFromEnv(context.Background(), slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("the function does not build with template.yaml's environment: %v", err)
	}
}

// TestTemplateChecks breaks the settings one at a time, to show that each
// rule of the template's test catches its mistake.
func TestTemplateChecks(t *testing.T) {
	t.Parallel()
	good := `
Resources:
  ScheduledFunction:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 600
      Environment:
        Variables:
          JOB_NAME: export
          JOB_LOCK_EXPIRES_AFTER: 1h
      EventInvokeConfig:
        MaximumEventAgeInSeconds: 3600
      Events:
        Tick:
          Type: ScheduleV2
          Properties:
            ScheduleExpression: rate(5 minutes)
            Input: '{"job": "export", "time": "<aws.scheduler.scheduled-time>"}'
            RetryPolicy:
              MaximumEventAgeInSeconds: 3600
`
	if p := templateProblems(parseTemplate(t, []byte(good))); len(p) != 0 {
		t.Fatalf("the good template has problems: %v", p)
	}
	input := `            Input: '{"job": "export", "time": "<aws.scheduler.scheduled-time>"}'` + "\n"
	for _, tt := range []struct {
		name  string
		edits []string // from, to, from, to...
		want  string   // a problem saying this; "" for none
	}{
		{"lock shorter than a run", []string{"JOB_LOCK_EXPIRES_AFTER: 1h", "JOB_LOCK_EXPIRES_AFTER: 10m"}, "JOB_LOCK_EXPIRES_AFTER 10m0s"},
		{"lock not a duration", []string{"JOB_LOCK_EXPIRES_AFTER: 1h", "JOB_LOCK_EXPIRES_AFTER: an hour"}, "not a Go duration"},
		{"the default timeout", []string{"Timeout: 600", "MemorySize: 256"}, ""},
		{"tick record outlived by retries", []string{"JOB_NAME: export", "JOB_NAME: export\n          POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER: 1h"}, "outlived"},
		{"Scheduler's default age", []string{
			"            RetryPolicy:\n              MaximumEventAgeInSeconds: 3600\n", "",
			"JOB_NAME: export", "JOB_NAME: export\n          POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER: 24h",
		}, "outlived"},
		{"time is not the scheduled time", []string{schedulerTime, "<aws.scheduler.execution-id>"}, "scheduled-time"},
		{"input not JSON", []string{`{"job": "export"`, `{"job": export`}, "not a tick"},
		{"job from JOB_NAME", []string{`"job": "export", `, ""}, ""},
		{"no job", []string{`"job": "export", `, "", "JOB_NAME: export", `JOB_NAME: ""`}, "no job"},
		{"no schedule", []string{"Type: ScheduleV2", "Type: SQS"}, "no schedule"},
		{"a rule", []string{"Type: ScheduleV2", "Type: Schedule", input, ""}, ""},
		{"a rule with an input", []string{"Type: ScheduleV2", "Type: Schedule"}, "Input replaces"},
		{"a rule without JOB_NAME", []string{"Type: ScheduleV2", "Type: Schedule", input, "", "JOB_NAME: export", `JOB_NAME: ""`}, "no job"},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			broken := good
			for i := 0; i+1 < len(tt.edits); i += 2 {
				if !strings.Contains(broken, tt.edits[i]) {
					t.Fatalf("the template has no %q to edit", tt.edits[i])
				}
				broken = strings.Replace(broken, tt.edits[i], tt.edits[i+1], 1)
			}
			problems := templateProblems(parseTemplate(t, []byte(broken)))
			switch {
			case tt.want == "" && len(problems) != 0:
				t.Errorf("problems %q, want none", problems)
			case tt.want != "" && !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }):
				t.Errorf("problems %q, want one about %q", problems, tt.want)
			}
		})
	}
}

func parseTemplate(t *testing.T, raw []byte) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("template: %v", err)
	}
	return doc.Content[0]
}

// templateProblems returns what breaks the rules in ScheduledFunction of
// the SAM template root:
//
//   - the job lock outlasts a run and its abandon grace
//     (JOB_LOCK_EXPIRES_AFTER > Timeout + 5 s);
//   - a tick's record outlasts every retry of the tick: its expiry is at
//     least the schedule's maximum event age plus Lambda's;
//   - each schedule sends a tick: Scheduler's input names the scheduled
//     time, and a rule sends its own event (no Input), and the job is
//     named, in the input or in JOB_NAME.
func templateProblems(root *yaml.Node) []string {
	props := template.Lookup(root, "Resources", logicalID, "Properties")
	vars := template.Lookup(props, "Environment", "Variables")
	env := func(name string) string { return scalar(template.Lookup(vars, name)) }
	var problems []string
	duration := func(name string, def time.Duration) time.Duration {
		v := env(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %q is not a Go duration", name, v))
			return def
		}
		return d
	}

	timeout := seconds(template.Lookup(props, "Timeout"), seconds(template.Lookup(root, "Globals", "Function", "Timeout"), 3*time.Second))
	if lock := duration("JOB_LOCK_EXPIRES_AFTER", defaultLockExpiry); lock <= timeout+idempotency.AbandonGrace {
		problems = append(problems, fmt.Sprintf("JOB_LOCK_EXPIRES_AFTER %v does not exceed the timeout %v plus the abandon grace %v: the lock would expire under a run",
			lock, timeout, idempotency.AbandonGrace))
	}
	tickExpiry := duration("POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER", defaultTickExpiry)
	lambdaAge := seconds(template.Lookup(props, "EventInvokeConfig", "MaximumEventAgeInSeconds"), defaultLambdaAge)

	schedules := 0
	events := template.Lookup(props, "Events")
	for i := 0; events != nil && i+1 < len(events.Content); i += 2 {
		name, ev := events.Content[i].Value, events.Content[i+1]
		typ := scalar(template.Lookup(ev, "Type"))
		if typ != "ScheduleV2" && typ != "Schedule" {
			continue
		}
		schedules++
		p := template.Lookup(ev, "Properties")
		if age := seconds(template.Lookup(p, "RetryPolicy", "MaximumEventAgeInSeconds"), defaultScheduleAge); tickExpiry < age+lambdaAge {
			problems = append(problems, fmt.Sprintf("%s: a tick's record (%v) is outlived by its retries: %v of the schedule's and %v of Lambda's",
				name, tickExpiry, age, lambdaAge))
		}
		input := template.Lookup(p, "Input")
		if typ == "Schedule" {
			if input != nil {
				problems = append(problems, name+": an Input replaces the rule's event, and its time")
			}
			if env("JOB_NAME") == "" {
				problems = append(problems, name+": no job: a rule's event names none, and JOB_NAME is not set")
			}
			continue
		}
		var e Event
		if err := json.Unmarshal([]byte(scalar(input)), &e); err != nil {
			problems = append(problems, fmt.Sprintf("%s: the Input is not a tick: %v", name, err))
			continue
		}
		if e.Time != schedulerTime {
			problems = append(problems, fmt.Sprintf("%s: the Input's time is %q, not %s: the retries of a tick would not share its key", name, e.Time, schedulerTime))
		}
		if e.Job == "" && env("JOB_NAME") == "" {
			problems = append(problems, name+": no job: the Input names none, and JOB_NAME is not set")
		}
	}
	if schedules == 0 {
		problems = append(problems, logicalID+": no schedule (a ScheduleV2 or Schedule event)")
	}
	return problems
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// seconds reads a number of seconds, or returns def.
func seconds(n *yaml.Node, def time.Duration) time.Duration {
	if v, err := strconv.Atoi(scalar(n)); err == nil {
		return time.Duration(v) * time.Second
	}
	return def
}

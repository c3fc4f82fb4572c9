package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestLintRepositoryTemplate: the repository's own templates keep every
// rule: the main one, and the minimal example's, which getting-started.md
// gives users to copy.
func TestLintRepositoryTemplate(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"template.yaml", "examples/minimal/template.yaml"} {
		r := (&harness{}).run(t, "lint", filepath.Join(testenv.RepoRoot(), name))
		if r.status != exitOK || r.stdout != "" {
			t.Errorf("%s is not clean: %v", name, r)
		}
	}
}

// TestLintTestdata runs lint on each template of testdata/lint: clean.yaml
// has no finding, and each other file gets exactly the findings its
// "# want: RESOURCE RULE" lines list, each with a fix.
func TestLintTestdata(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/lint/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("testdata/lint: %d files, %v", len(files), err)
	}
	rules := map[string]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for line := range strings.Lines(string(raw)) {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					want = append(want, strings.TrimSpace(w))
				}
			}
			r := (&harness{}).run(t, "lint", file)
			var got []string
			for line := range strings.Lines(r.stdout) {
				resource, rest, _ := strings.Cut(line, ": ")
				rule, rest, _ := strings.Cut(rest, ": ")
				got = append(got, resource+" "+rule)
				rules[rule] = true
				if !strings.Contains(rest, " Fix: ") {
					t.Errorf("a finding without a fix: %s", line)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("findings:\n  %s\nwant:\n  %s\n%v", strings.Join(got, "\n  "), strings.Join(want, "\n  "), r)
			}
			wantStatus := exitFailed
			if len(want) == 0 {
				wantStatus = exitOK
			}
			r.want(t, wantStatus)
		})
	}
	for _, rule := range []string{"visibility-timeout", "dead-letter-queue", "max-receive-count", "batch-item-failures", "dead-letter-alarm", "table-ttl", "global-table", "table-access", "record-expiry", "key-path", "settings"} {
		if !rules[rule] {
			t.Errorf("no template of testdata/lint breaks %s", rule)
		}
	}
}

// TestLintSettingsFix: a setting the function refuses is one it fails
// at cold start with; a declaration that cannot be read is not, since the
// function never reads it.
func TestLintSettingsFix(t *testing.T) {
	t.Parallel()
	r := (&harness{}).run(t, "lint", "testdata/lint/settings.yaml").want(t, exitFailed)
	for line := range strings.Lines(r.stdout) {
		coldStart := strings.Contains(line, "fails at cold start")
		switch {
		case strings.HasPrefix(line, "Typo: ") && (coldStart || !strings.Contains(line, "never reads it")):
			t.Errorf("a declaration's fix says the function fails: %s", line)
		case strings.HasPrefix(line, "BadHash: ") && (!coldStart || !strings.Contains(line, "POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION")):
			t.Errorf("a variable's fix: %s", line)
		}
	}
}

func TestLintUnreadable(t *testing.T) {
	t.Parallel()
	for name, path := range map[string]string{
		"missing":      filepath.Join(t.TempDir(), "template.yaml"),
		"not YAML":     writeFile(t, "bad.yaml", "Resources: [\n"),
		"no Resources": writeFile(t, "empty.yaml", "AWSTemplateFormatVersion: \"2010-09-09\"\n"),
		"a list":       writeFile(t, "list.yaml", "- a\n- b\n"),
	} {
		t.Run(name, func(t *testing.T) {
			r := (&harness{}).run(t, "lint", path).want(t, exitUsage)
			if r.stdout != "" || r.stderr == "" {
				t.Errorf("want the reason on stderr only: %v", r)
			}
		})
	}
}

// TestLintJSONTemplate: a template in JSON, with the long forms of the
// intrinsic functions, reads as its YAML twin does.
func TestLintJSONTemplate(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "template.json", `{
  "Resources": {
    "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 10}},
    "Consumer": {
      "Type": "AWS::Serverless::Function",
      "Properties": {
        "Timeout": 2,
        "Events": {"Q": {"Type": "SQS", "Properties": {
          "Queue": {"Fn::GetAtt": ["Queue", "Arn"]},
          "FunctionResponseTypes": ["ReportBatchItemFailures"]}}}
      }
    }
  }
}`)
	r := (&harness{}).run(t, "lint", path).want(t, exitFailed)
	for _, want := range []string{"Queue: visibility-timeout: its visibility timeout of 10 s is under 6 times the timeout of Consumer (2 s)", "Queue: dead-letter-queue: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lint wrote:\n%s\nwant a line with %q", r.stdout, want)
		}
	}
}

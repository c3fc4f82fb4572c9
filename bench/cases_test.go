package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gojmespath "github.com/jmespath/go-jmespath"
)

// benchCase is one query run by both engines on the same decoded document.
type benchCase struct {
	name string
	doc  any
	// raw is doc as the JSON Lambda hands over, for the cases where a handler
	// starts from bytes; nil for the compliance cases.
	raw []byte
	// ours is the expression for our engine.
	ours string
	// theirs is the nearest go-jmespath equivalent: expressions applied in
	// turn, each after the first to the JSON decoding of the string the
	// previous one returned (go-jmespath has no powertools_json).
	theirs []string
}

// complianceFile holds the bench cases of the JMESPath compliance suite, in
// the project's shared folder beside the repository (absent from a user's
// clone).
var complianceFile = filepath.Join("..", "..", "shared", "testdata", "jmespath-compliance", "benchmarks.json")

// complianceCases returns the suite's bench cases, or an error wrapping
// os.ErrNotExist when the file is absent.
func complianceCases() ([]benchCase, error) {
	b, err := os.ReadFile(complianceFile)
	if err != nil {
		return nil, err
	}
	var suites []struct {
		Given json.RawMessage `json:"given"`
		Cases []struct {
			Comment    string `json:"comment"`
			Expression string `json:"expression"`
			Bench      string `json:"bench"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &suites); err != nil {
		return nil, fmt.Errorf("%s: %w", complianceFile, err)
	}
	var cases []benchCase
	seen := map[string]bool{}
	for _, s := range suites {
		for _, c := range s.Cases {
			if c.Bench == "" {
				continue
			}
			var doc any
			if err := json.Unmarshal(s.Given, &doc); err != nil {
				return nil, fmt.Errorf("%s: given: %w", complianceFile, err)
			}
			name := strings.ReplaceAll(c.Comment, " ", "_")
			if name == "" || seen[name] {
				name = fmt.Sprintf("%s_%d", name, len(cases))
			}
			seen[name] = true
			cases = append(cases, benchCase{name: name, doc: doc, ours: c.Expression, theirs: []string{c.Expression}})
		}
	}
	return cases, nil
}

// skipWithoutCompliance skips, or fails under CI (CI=true), when the
// compliance suite cannot be read.
func skipWithoutCompliance(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" || !errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("compliance bench cases: %v", err)
	}
	tb.Skipf("compliance bench cases skipped: %s is absent (it lives in the project's shared folder beside the repository, not in a user's clone)", complianceFile)
}

// lambdaCases are the queries an idempotent handler runs on real events.
func lambdaCases(tb testing.TB) []benchCase {
	tb.Helper()
	apigw := compactFile(tb, filepath.Join("..", "jmespath", "testdata", "events", "apigw-rest.json"))
	sqs := sqsBatch(tb, 10)
	return []benchCase{
		{name: "apigw_requestId", raw: apigw, doc: decode(tb, apigw),
			ours: "requestContext.requestId", theirs: []string{"requestContext.requestId"}},
		{name: "apigw_powertools_json_body", raw: apigw, doc: decode(tb, apigw),
			ours: "powertools_json(body).order_id", theirs: []string{"body", "order_id"}},
		{name: "sqs10_messageIds", raw: sqs, doc: decode(tb, sqs),
			ours: "Records[*].messageId", theirs: []string{"Records[*].messageId"}},
	}
}

// sqsBatch returns an SQS event of n messages, made from the first message
// of the envelope fixture with distinct ids.
func sqsBatch(tb testing.TB, n int) []byte {
	tb.Helper()
	var event struct {
		Records []map[string]any `json:"Records"`
	}
	if err := json.Unmarshal(compactFile(tb, filepath.Join("..", "jmespath", "testdata", "events", "sqs.json")), &event); err != nil {
		tb.Fatal(err)
	}
	records := make([]map[string]any, n)
	for i := range records {
		r := make(map[string]any, len(event.Records[0]))
		for k, v := range event.Records[0] {
			r[k] = v
		}
		r["messageId"] = fmt.Sprintf("059f36b4-87a3-44ab-83d2-6619758300%02d", i)
		records[i] = r
	}
	b, err := json.Marshal(map[string]any{"Records": records})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func compactFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return out.Bytes()
}

func decode(tb testing.TB, raw []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// theirSteps is a compiled go-jmespath chain, see benchCase.theirs.
type theirSteps []*gojmespath.JMESPath

func compileTheirs(exprs []string) (theirSteps, error) {
	steps := make(theirSteps, len(exprs))
	for i, e := range exprs {
		c, err := gojmespath.Compile(e)
		if err != nil {
			return nil, err
		}
		steps[i] = c
	}
	return steps, nil
}

func (s theirSteps) search(doc any) (any, error) {
	v := doc
	for i, step := range s {
		if i > 0 {
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("step %d: want a JSON string, got %T", i, v)
			}
			var decoded any
			if err := json.Unmarshal([]byte(str), &decoded); err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			v = decoded
		}
		var err error
		if v, err = step.Search(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// searchRaw is what a handler using go-jmespath does with the bytes of an
// event: decode them all, then search.
func (s theirSteps) searchRaw(raw []byte) (any, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return s.search(doc)
}

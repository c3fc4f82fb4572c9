package jmespath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

type complianceSuite struct {
	Comment string            `json:"comment"`
	Given   json.RawMessage   `json:"given"`
	Cases   []json.RawMessage `json:"cases"`
}

type complianceCase struct {
	Expression string           `json:"expression"`
	Result     *json.RawMessage `json:"result"`
	Error      string           `json:"error"`
	Bench      string           `json:"bench"`
}

type namedCase struct {
	name  string
	given json.RawMessage
	complianceCase
}

// loadCompliance reads the official suite from the shared test data.
func loadCompliance(t testing.TB) []namedCase {
	t.Helper()
	dir := testenv.SharedDir(t, "testdata/jmespath-compliance")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no compliance files in %s: %v", dir, err)
	}
	sort.Strings(files)
	var out []namedCase
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var suites []complianceSuite
		if err := json.Unmarshal(raw, &suites); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for si, s := range suites {
			for ci, rc := range s.Cases {
				var c complianceCase
				if err := json.Unmarshal(rc, &c); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				// A result of null is present in the file, so tell it from absent.
				if c.Result == nil && bytes.Contains(rc, []byte(`"result"`)) {
					var probe map[string]json.RawMessage
					_ = json.Unmarshal(rc, &probe)
					if r, ok := probe["result"]; ok {
						c.Result = &r
					}
				}
				name := fmt.Sprintf("%s/%d/%d/%s", strings.TrimSuffix(filepath.Base(f), ".json"), si, ci, c.Expression)
				out = append(out, namedCase{name: name, given: s.Given, complianceCase: c})
			}
		}
	}
	return out
}

func TestCompliance(t *testing.T) {
	t.Parallel()
	cases := loadCompliance(t)
	for _, useNumber := range []bool{false, true} {
		t.Run(fmt.Sprintf("UseNumber=%v", useNumber), func(t *testing.T) {
			ran := 0
			for _, c := range cases {
				if c.Bench != "" {
					continue
				}
				ran++
				t.Run(c.name, func(t *testing.T) { runComplianceCase(t, c, useNumber) })
			}
			if ran != 892 {
				t.Errorf("ran %d result/error cases, want 892", ran)
			}
		})
	}
}

func decodeTestJSON(t testing.TB, raw []byte, useNumber bool) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	if useNumber {
		d.UseNumber()
	}
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func runComplianceCase(t *testing.T, c namedCase, useNumber bool) {
	given := decodeTestJSON(t, c.given, useNumber) // a fresh copy per case
	got, err := func() (any, error) {
		e, err := Compile(c.Expression)
		if err != nil {
			return nil, err
		}
		return e.Search(given)
	}()
	if c.Error != "" {
		if !isErrorKind(err, c.Error) {
			t.Fatalf("%q: got (%#v, %v), want a %s error", c.Expression, got, err, c.Error)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: unexpected error %v", c.Expression, err)
	}
	var want any
	if c.Result != nil {
		want = decodeTestJSON(t, *c.Result, false)
	}
	if !reflect.DeepEqual(normalize(t, got), want) {
		t.Fatalf("%q: got %#v, want %#v", c.Expression, got, want)
	}
}

func isErrorKind(err error, kind string) bool {
	switch kind {
	case "syntax":
		var e *SyntaxError
		return errors.As(err, &e)
	case "invalid-type":
		var e *InvalidTypeError
		return errors.As(err, &e)
	case "invalid-value":
		var e *InvalidValueError
		return errors.As(err, &e)
	case "invalid-arity":
		var e *ArityError
		return errors.As(err, &e)
	case "unknown-function":
		var e *UnknownFunctionError
		return errors.As(err, &e)
	}
	return false
}

// normalize turns a result into what encoding/json decodes from its JSON
// text, so that numbers compare by value.
func normalize(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	return decodeTestJSON(t, b, false)
}

package jmespath

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var double = Function{
	Name:   "double",
	Params: []Param{{Types: TypeNumber}},
	Call:   func(args []any) (any, error) { return toFloat(args[0]) * 2, nil },
}

var concat = Function{
	Name:     "concat",
	Params:   []Param{{Types: TypeString}, {Types: TypeString | TypeNull}},
	Variadic: true,
	Call: func(args []any) (any, error) {
		var b strings.Builder
		for _, a := range args {
			if s, ok := a.(string); ok {
				b.WriteString(s)
			}
		}
		return b.String(), nil
	},
}

var apply = Function{
	Name:   "apply",
	Params: []Param{{Types: TypeExpRef}, {Types: TypeAny}},
	Call:   func(args []any) (any, error) { return args[0].(*ExpRef).Search(args[1]) },
}

func TestCustomFunctions(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	failing := Function{Name: "fail", Call: func([]any) (any, error) { return nil, errBoom }}
	upperAbs := Function{Name: "abs", Params: []Param{{Types: TypeString}},
		Call: func(a []any) (any, error) { return strings.ToUpper(a[0].(string)), nil }}
	opt := WithFunctions(double, concat, apply, failing)
	data := map[string]any{"n": 21.0, "s": "a", "o": map[string]any{"k": "v"}}

	tests := []struct {
		expr string
		opts []Option
		want any
	}{
		{"double(n)", []Option{opt}, 42.0},
		{"concat(s, 'b')", []Option{opt}, "ab"},
		{"concat(s, `null`, 'c', 'd')", []Option{opt}, "acd"},
		{"apply(&k, o)", []Option{opt}, "v"},
		{"abs('x')", []Option{WithFunctions(upperAbs)}, "X"},
		{"abs(`-1`)", []Option{opt}, json.Number("1")},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			e, err := Compile(tt.expr, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Search(data)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("= %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}

	t.Run("compile-time checks", func(t *testing.T) {
		var ue *UnknownFunctionError
		if _, err := Compile("double(n)"); !errors.As(err, &ue) {
			t.Errorf("without the option: %v, want *UnknownFunctionError", err)
		}
		var ae *ArityError
		if _, err := Compile("double(n, n)", opt); !errors.As(err, &ae) || ae.Min != 1 || ae.Max != 1 {
			t.Errorf("double(n, n): %v, want *ArityError", err)
		}
		if _, err := Compile("concat(s)", opt); !errors.As(err, &ae) || ae.Min != 2 || ae.Max != -1 {
			t.Errorf("concat(s): %v, want *ArityError", err)
		}
	})
	t.Run("run-time type checks", func(t *testing.T) {
		var te *InvalidTypeError
		if _, err := mustCompile(t, "double(s)", opt).Search(data); !errors.As(err, &te) || te.Function != "double" || te.Got != "string" {
			t.Errorf("double(s): %v, want *InvalidTypeError", err)
		}
		if _, err := mustCompile(t, "concat(s, 'b', `1`)", opt).Search(data); !errors.As(err, &te) || te.Arg != 2 {
			t.Errorf("variadic arg 3: %v, want *InvalidTypeError for argument index 2", err)
		}
		if _, err := mustCompile(t, "apply(o, o)", opt).Search(data); !errors.As(err, &te) || te.Want != TypeExpRef {
			t.Errorf("apply(o, o): %v, want *InvalidTypeError", err)
		}
	})
	t.Run("user error unchanged", func(t *testing.T) {
		if _, err := mustCompile(t, "fail()", opt).Search(data); err != errBoom {
			t.Errorf("error = %v, want the function's own", err)
		}
	})
	t.Run("user panic propagates", func(t *testing.T) {
		p := Function{Name: "p", Call: func([]any) (any, error) { panic("mine") }}
		defer func() {
			if r := recover(); r != "mine" {
				t.Errorf("recovered %v, want the function's panic value", r)
			}
		}()
		_, _ = mustCompile(t, "p()", WithFunctions(p)).Search(nil)
		t.Error("no panic")
	})
}

func mustCompile(t *testing.T, expr string, opts ...Option) *Expression {
	t.Helper()
	e, err := Compile(expr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestBadFunctionDefinitions(t *testing.T) {
	t.Parallel()
	call := func([]any) (any, error) { return nil, nil }
	for _, f := range []Function{
		{Name: "", Call: call},
		{Name: "1x", Call: call},
		{Name: "a-b", Call: call},
		{Name: "é", Call: call},
		{Name: "nocall"},
		{Name: "v", Variadic: true, Call: call},
		{Name: "t", Params: []Param{{}}, Call: call},
	} {
		var fe *FunctionDefinitionError
		if _, err := Compile("@", WithFunctions(f)); !errors.As(err, &fe) || fe.Name != f.Name {
			t.Errorf("%+v: error %v, want *FunctionDefinitionError", f.Name, err)
		}
	}
}

func gzipBase64(t *testing.T, s []byte) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestPowertoolsFunctions(t *testing.T) {
	t.Parallel()
	b64 := base64.StdEncoding.EncodeToString
	data := map[string]any{
		"json":     `{"id": 12345678901234567890, "f": 1.50, "s": "\u00e9"}`,
		"badjson":  `{"id": 1`,
		"trailing": `{} x`,
		"b64":      b64([]byte(`{"a":"b"}`)),
		"badb64":   "!!!",
		"nonutf8":  b64([]byte{0xff, 0xfe}),
		"gz":       gzipBase64(t, []byte(`{"x":[1,2]}`)),
		"notgz":    b64([]byte("plain")),
		"gzbad8":   gzipBase64(t, []byte{0xc3}),
		"n":        1.0,
	}
	good := []struct {
		expr string
		want any
	}{
		{"powertools_json(json).id", json.Number("12345678901234567890")},
		{"powertools_json(json).f", json.Number("1.50")},
		{"powertools_json(json).s", "é"},
		{"powertools_base64(b64)", `{"a":"b"}`},
		{"powertools_json(powertools_base64(b64)).a", "b"},
		{"powertools_base64_gzip(gz)", `{"x":[1,2]}`},
		{"powertools_json(powertools_base64_gzip(gz)).x[1]", json.Number("2")},
	}
	for _, tt := range good {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := MustCompile(tt.expr).Search(data)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("= %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
	bad := []struct {
		expr     string
		typeErr  bool
		function string
	}{
		{"powertools_json(badjson)", false, "powertools_json"},
		{"powertools_json(trailing)", false, "powertools_json"},
		{"powertools_json(n)", true, "powertools_json"},
		{"powertools_json(missing)", true, "powertools_json"},
		{"powertools_base64(badb64)", false, "powertools_base64"},
		{"powertools_base64(nonutf8)", false, "powertools_base64"},
		{"powertools_base64_gzip(badb64)", false, "powertools_base64_gzip"},
		{"powertools_base64_gzip(notgz)", false, "powertools_base64_gzip"},
		{"powertools_base64_gzip(gzbad8)", false, "powertools_base64_gzip"},
		{"powertools_base64_gzip(n)", true, "powertools_base64_gzip"},
	}
	for _, tt := range bad {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := MustCompile(tt.expr).Search(data)
			if tt.typeErr {
				var te *InvalidTypeError
				if !errors.As(err, &te) || te.Function != tt.function {
					t.Errorf("= %#v, %v; want *InvalidTypeError", got, err)
				}
				return
			}
			var ve *InvalidValueError
			if !errors.As(err, &ve) || ve.Function != tt.function || ve.Err == nil {
				t.Errorf("= %#v, %v; want *InvalidValueError with a cause", got, err)
			}
		})
	}
}

// Integers beyond float64's 53 bits survive comparison, sorting and the
// functions that do not need arithmetic.
func TestPrecision(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"a": 12345678901234567890, "b": 12345678901234567891, "c": -98765432109876543210,
		"list": [12345678901234567891, 12345678901234567890, 9007199254740993],
		"small": [9007199254740993, 1], "f": 1.5, "s": "12345678901234567891"}`)
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var data any
	if err := d.Decode(&data); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr string
		want any
	}{
		{"a == b", false},
		{"a < b", true},
		{"b > a", true},
		{"a == `12345678901234567890`", true},
		{"a == `12345678901234567890.0`", true},
		{"a == `12345678901234567890.5`", false},
		{"c < `0`", true},
		{"max(list)", json.Number("12345678901234567891")},
		{"min(list)", json.Number("9007199254740993")},
		{"sort(list)", []any{json.Number("9007199254740993"), json.Number("12345678901234567890"), json.Number("12345678901234567891")}},
		{"list[?@ > `12345678901234567890`]", []any{json.Number("12345678901234567891")}},
		{"abs(c)", json.Number("98765432109876543210")},
		{"ceil(a)", json.Number("12345678901234567890")},
		{"floor(c)", json.Number("-98765432109876543210")},
		{"to_string(b)", "12345678901234567891"},
		{"to_string(list)", "[12345678901234567891,12345678901234567890,9007199254740993]"},
		{"to_number(s)", json.Number("12345678901234567891")},
		{"to_number(s) == b", true},
		{"sum(small)", json.Number("9007199254740994")},
		{"sum(list)", 12345678901234567891.0 + 12345678901234567890.0 + 9007199254740993.0},
		{"contains(list, b)", true},
		{"a == `1.2345678901234567e19`", false},
		{"a == `1.234567890123456789e19`", true},
		{"a == `12345678901234567890e0`", true},
		{"`0.1` == `1e-1`", true},
		{"`-0` == `0.0`", true},
		{"`1e999999999999999999999` > `1e9999`", true},
		{"`9007199254740993` == `9007199254740992.0`", false},
		{"abs(f)", 1.5},
		{"ceil(f)", json.Number("2")}, // replaced below: ceil of a non-integer is a float64
	}
	tests[len(tests)-1].want = 2.0
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := MustCompile(tt.expr).Search(data)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("= %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

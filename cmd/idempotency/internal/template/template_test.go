package template

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const sample = `
Parameters:
  Name: {Type: String, Default: from-parameter}
  NoDefault: {Type: String}
Globals:
  Function:
    Timeout: 7
    Environment:
      Variables:
        SHARED: global
        OVERRIDDEN: global
Resources:
  Table:
    Type: AWS::DynamoDB::Table
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: !Ref Name
      Environment:
        Variables:
          OVERRIDDEN: own
          TABLE: !Ref Table
          SUB: !Sub plain
  Plain:
    Type: AWS::Lambda::Function
    Properties:
      Environment:
        Variables:
          OWN: "1"
  Refs:
    Type: Test::Refs
    Properties:
      - !Ref Table
      - !GetAtt Table.Arn
      - !GetAtt [Table, StreamArn]
      - {Ref: Table}
      - {"Fn::GetAtt": [Table, Arn]}
      - {"Fn::GetAtt": "Table.Arn"}
      - !Sub "${Table.Arn}"
      - !Sub "${Table}"
      - !Sub "arn:${Table}"
      - !Ref Missing
      - Table
`

func parse(t *testing.T) *Template {
	t.Helper()
	tmpl, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestRef(t *testing.T) {
	tmpl := parse(t)
	want := []string{"Table ", "Table Arn", "Table StreamArn", "Table ", "Table Arn", "Table Arn", "Table Arn", "Table ", " ", " ", " "}
	for i, n := range tmpl.Resource("Refs").Properties.Content {
		id, attr := tmpl.Ref(n)
		if got := id + " " + attr; got != want[i] {
			t.Errorf("Ref of item %d = %q, want %q", i, got, want[i])
		}
	}
}

func TestString(t *testing.T) {
	tmpl := parse(t)
	for _, tt := range []struct {
		yaml string
		want string
		ok   bool
	}{
		{"plain", "plain", true},
		{"42", "42", true},
		{"!Ref Name", "from-parameter", true},
		{"!Ref NoDefault", "", false},
		{"!Ref Table", "", false},
		{"!Sub literal", "literal", true},
		{"!Sub ${Name}", "", false},
		{"!GetAtt Table.Arn", "", false},
		{"[a, b]", "", false},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(tt.yaml), &doc); err != nil {
			t.Fatal(err)
		}
		if got, ok := tmpl.String(doc.Content[0]); got != tt.want || ok != tt.ok {
			t.Errorf("String(%s) = %q, %v; want %q, %v", tt.yaml, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFunction(t *testing.T) {
	tmpl := parse(t)
	fn := tmpl.Function("Fn")
	env := fn.Env()
	for name, want := range map[string]string{"SHARED": "global", "OVERRIDDEN": "own", "SUB": "plain", FunctionNameEnv: "from-parameter", "TABLE": ""} {
		if env[name] != want {
			t.Errorf("Fn's %s = %q, want %q", name, env[name], want)
		}
	}
	if fn.Timeout() != 7 {
		t.Errorf("Fn's timeout = %d, want the Globals' 7", fn.Timeout())
	}
	plain := tmpl.Function("Plain")
	if env := plain.Env(); env["SHARED"] != "" || env["OWN"] != "1" {
		t.Errorf("an AWS::Lambda::Function got SAM's Globals: %v", env)
	}
	if plain.Timeout() != 3 {
		t.Errorf("Plain's timeout = %d, want Lambda's default 3", plain.Timeout())
	}
	if tmpl.Function("Table") != nil || tmpl.Function("Nothing") != nil {
		t.Error("Function of a table, or of nothing, is not nil")
	}
	if got := len(tmpl.Functions()); got != 2 {
		t.Errorf("%d functions, want 2", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, raw := range []string{"", "[1, 2]", "Resources: [a]", "Resources:\n  - a", "AWSTemplateFormatVersion: x", "{"} {
		if _, err := Parse([]byte(raw)); err == nil {
			t.Errorf("Parse(%q) = nil error", raw)
		}
	}
}

func TestCode(t *testing.T) {
	for _, tt := range []struct {
		metadata string
		want     string // an error's text, or "" for none
	}{
		{"{WrapFunc: a.b, EventKey: id, PayloadValidation: '[x]', KeyRequired: true, ExpiresAfter: 2h}", ""},
		{"{EventKeyPath: id}", `unknown entry "EventKeyPath"`},
		{"{KeyRequired: maybe}", "want true or false"},
		{"{ExpiresAfter: 3600}", "at least 1s"},
		{"{ExpiresAfter: 500ms}", "at least 1s"},
		{"{EventKey: [a]}", "not a string"},
	} {
		tmpl, err := Parse([]byte("Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Metadata:\n      Idempotency: " + tt.metadata + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		code, err := tmpl.Function("F").Code()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.metadata, err)
		case tt.want == "" && (code.WrapFunc != "a.b" || *code.EventKey != "id" || *code.PayloadValidation != "[x]" || !code.KeyRequired || code.ExpiresAfter != 2*time.Hour):
			t.Errorf("%s: %+v", tt.metadata, code)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one with %q", tt.metadata, err, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	str := func(s string) *string { return &s }
	env := map[string]string{
		EventKeyEnv: "env.key", ValidationEnv: "env.validation", KeyPrefixEnv: "env-prefix",
		ExpiresAfterEnv: "3h", FunctionNameEnv: "fn",
	}
	for _, tt := range []struct {
		name string
		code Code
		env  map[string]string
		want Settings
	}{
		{"defaults", Code{}, nil, Settings{ExpiresAfter: time.Hour}},
		{"environment", Code{}, env, Settings{EventKey: "env.key", EventKeySet: true, PayloadValidation: "env.validation", KeyPrefix: "env-prefix", ExpiresAfter: 3 * time.Hour}},
		{"function name as prefix", Code{}, map[string]string{FunctionNameEnv: "fn", EventKeyEnv: ""}, Settings{KeyPrefix: "fn", ExpiresAfter: time.Hour}},
		{"code wins", Code{EventKey: str(""), PayloadValidation: str(""), KeyPrefix: str("code"), ExpiresAfter: time.Minute, KeyRequired: true}, env,
			Settings{EventKeySet: true, KeyPrefix: "code", ExpiresAfter: time.Minute, KeyRequired: true}},
		{"a wrapper reads only the expiry", Code{WrapFunc: "w"}, env, Settings{WrapFunc: "w", KeyPrefix: "fn.w", ExpiresAfter: 3 * time.Hour}},
		{"a wrapper outside Lambda", Code{WrapFunc: "w", EventKey: str("id")}, nil, Settings{WrapFunc: "w", EventKey: "id", EventKeySet: true, KeyPrefix: "w", ExpiresAfter: time.Hour}},
	} {
		got, err := Resolve(tt.code, tt.env)
		if err != nil || got != tt.want {
			t.Errorf("%s: Resolve = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	for name, tt := range map[string]struct {
		code Code
		env  map[string]string
	}{
		"bad expiry":         {Code{}, map[string]string{ExpiresAfterEnv: "1 hour"}},
		"short expiry":       {Code{}, map[string]string{ExpiresAfterEnv: "10ms"}},
		"a wrapper's prefix": {Code{WrapFunc: "w", KeyPrefix: str("p")}, nil},
	} {
		if _, err := Resolve(tt.code, tt.env); err == nil {
			t.Errorf("%s: Resolve = nil error", name)
		}
	}
}

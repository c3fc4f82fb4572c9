package template

import (
	"fmt"
	"strings"
	"testing"

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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	for _, raw := range []string{"", "[1, 2]", "Resources: [a]", "Resources:\n  - a", "AWSTemplateFormatVersion: x", "{"} {
		if _, err := Parse([]byte(raw)); err == nil {
			t.Errorf("Parse(%q) = nil error", raw)
		}
	}
}

func TestDeclared(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		metadata string
		want     string // the entries, or an error's text
	}{
		{"{WrapFunc: a.b, EventKey: id, KeyRequired: true, ExpiresAfter: 2h, Hash: !Ref Hash}", "map[EventKey:id ExpiresAfter:2h Hash:md5 KeyRequired:true WrapFunc:a.b]"},
		{"{}", "map[]"},
		{"{EventKey: [a]}", "Metadata.Idempotency.EventKey is not a string"},
		{"{Hash: !Ref Table}", "Metadata.Idempotency.Hash is not a string"},
		{"[EventKey]", "not a mapping"},
	} {
		tmpl, err := Parse([]byte("Parameters:\n  Hash: {Type: String, Default: md5}\nResources:\n  Table:\n    Type: AWS::DynamoDB::Table\n  F:\n    Type: AWS::Serverless::Function\n    Metadata:\n      Idempotency: " + tt.metadata + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := tmpl.Function("F").Declared()
		got := fmt.Sprint(entries)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: %s, want %s", tt.metadata, got, tt.want)
		}
	}
}

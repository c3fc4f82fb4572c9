package main

import (
	"fmt"
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
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// TestResponsesTemplate checks what template.yaml gives PaymentsFunction
// for its responses against what the code does: cfn-lint knows the
// resource schemas, not these.
func TestResponsesTemplate(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range responsesProblems(t, raw) {
		t.Error(p)
	}
}

// TestResponsesTemplateChecks breaks template.yaml one setting at a time,
// to show that each check of the responses template's test catches its
// mistake.
func TestResponsesTemplateChecks(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, from, to, want string }{
		{"alias renamed", `AliasName: !Sub "alias/${AWS::StackName}-payments-responses"`, `AliasName: !Sub "alias/${AWS::StackName}-responses"`, "alias"},
		{"context of another key", `"kms:EncryptionContext:idempotency-function"`, `"kms:EncryptionContext:function"`, "encryption context"},
		{"context of another function", `"kms:EncryptionContext:idempotency-function": !Ref PaymentsFunction`, `"kms:EncryptionContext:idempotency-function": payments`, "encryption context"},
		{"key used for more", "              - kms:GenerateDataKey\n", "              - kms:GenerateDataKey\n              - kms:Encrypt\n", "actions"},
		{"lifecycle on another prefix", "Prefix: idempotency/", "Prefix: responses/", "lifecycle"},
		{"lifecycle shorter than the records", "PAYMENT_PROVIDER_TIMEOUT: 5s\n", "PAYMENT_PROVIDER_TIMEOUT: 5s\n          POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER: 48h\n", "lifecycle"},
		{"objects elsewhere", `Resource: !Sub "${ResponsesBucket.Arn}/idempotency/*"`, `Resource: !Sub "${ResponsesBucket.Arn}/responses/*"`, "objects"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(raw), tt.from) {
				t.Fatalf("template.yaml has no %q to break", tt.from)
			}
			broken := strings.Replace(string(raw), tt.from, tt.to, 1)
			problems := responsesProblems(t, []byte(broken))
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Errorf("problems %q, want one about %q", problems, tt.want)
			}
		})
	}
}

// responsesProblems lists what is wrong with the responses' settings of
// template raw.
func responsesProblems(t *testing.T, raw []byte) []string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	res := func(keys ...string) *yaml.Node {
		return template.Lookup(root, append([]string{"Resources"}, keys...)...)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// The function names the key by its alias's name, which must be the
	// alias's (a !Ref would make a dependency cycle with the key policy).
	env := res("PaymentsFunction", "Properties", "Environment", "Variables")
	keyVar := template.Lookup(env, responsesKeyEnv)
	alias := res("ResponsesKeyAlias", "Properties", "AliasName")
	if keyVar == nil || keyVar.Tag != "!If" || len(keyVar.Content) != 3 || alias == nil ||
		keyVar.Content[1].Tag != alias.Tag || keyVar.Content[1].Value != alias.Value {
		bad("%s names another key than ResponsesKeyAlias's alias %s", responsesKeyEnv, nodeText(alias))
	}

	// The function's role makes and decrypts data keys, nothing else, and
	// only under the encryption context of the function's own name.
	found := false
	for _, st := range seq(res("ResponsesKey", "Properties", "KeyPolicy", "Statement")) {
		if nodeText(template.Lookup(st, "Principal", "AWS")) != "!GetAtt PaymentsFunctionRole.Arn" {
			continue
		}
		found = true
		var actions []string
		for _, a := range seq(template.Lookup(st, "Action")) {
			actions = append(actions, a.Value)
		}
		if !slices.Equal(actions, []string{"kms:GenerateDataKey", "kms:Decrypt"}) {
			bad("the key policy allows the function's role the actions %v, want kms:GenerateDataKey and kms:Decrypt", actions)
		}
		cond := template.Lookup(st, "Condition", "StringEquals")
		ctx := template.Lookup(cond, "kms:EncryptionContext:"+responsestore.EncryptionContextKey)
		if cond == nil || len(cond.Content) != 2 || nodeText(ctx) != "!Ref PaymentsFunction" {
			bad("the key policy's encryption context is %s, want kms:EncryptionContext:%s equal to !Ref PaymentsFunction", nodeText(cond), responsestore.EncryptionContextKey)
		}
	}
	if !found {
		bad("the key policy does not name PaymentsFunctionRole")
	}

	// The objects are where the function writes them, and outlive the
	// records: S3 counts whole days.
	expiry := time.Hour // the middleware's default
	if v := template.Lookup(env, "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"); v != nil {
		d, err := time.ParseDuration(v.Value)
		if err != nil {
			t.Fatal(err)
		}
		expiry = d
	}
	minDays := max(int((expiry+24*time.Hour-1)/(24*time.Hour)), 1)
	rules := seq(res("ResponsesBucket", "Properties", "LifecycleConfiguration", "Rules"))
	if !slices.ContainsFunc(rules, func(r *yaml.Node) bool {
		days, _ := strconv.Atoi(nodeText(template.Lookup(r, "ExpirationInDays")))
		return nodeText(template.Lookup(r, "Status")) == "Enabled" &&
			nodeText(template.Lookup(r, "Prefix")) == responsestore.DefaultObjectPrefix && days >= minDays
	}) {
		bad("no lifecycle rule expires %s after %d days or more, the records' expiry of %v", responsestore.DefaultObjectPrefix, minDays, expiry)
	}
	objects := "${ResponsesBucket.Arn}/" + responsestore.DefaultObjectPrefix + "*"
	if !slices.ContainsFunc(statements(res("PaymentsFunction", "Properties", "Policies")), func(st *yaml.Node) bool {
		r := template.Lookup(st, "Resource")
		return r != nil && r.Tag == "!Sub" && r.Value == objects &&
			slices.ContainsFunc(seq(template.Lookup(st, "Action")), func(a *yaml.Node) bool { return a.Value == "s3:PutObject" }) &&
			slices.ContainsFunc(seq(template.Lookup(st, "Action")), func(a *yaml.Node) bool { return a.Value == "s3:GetObject" })
	}) {
		bad("the function may not write and read the objects, %s", objects)
	}
	return problems
}

// seq is the items of a sequence node, or none.
func seq(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// statements is the statements of a function's Policies, those under an
// !If included.
func statements(policies *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, p := range seq(policies) {
		if p.Tag == "!If" && len(p.Content) == 3 {
			p = p.Content[1]
		}
		out = append(out, seq(template.Lookup(p, "Statement"))...)
	}
	return out
}

// nodeText is a scalar as written, with its tag when it has one of its own
// ("!Ref PaymentsFunction").
func nodeText(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind != yaml.ScalarNode:
		return fmt.Sprintf("a YAML node of kind %d", n.Kind)
	case strings.HasPrefix(n.Tag, "!!"):
		return n.Value
	}
	return n.Tag + " " + n.Value
}

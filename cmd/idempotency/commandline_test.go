package main

import (
	"strings"
	"testing"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/lint"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestFlagsAfterArguments: flags may follow the event file, as people
// write them; "--" ends the flags.
func TestFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	const ev = `{"order_id":"o-1","amount":1250}`
	w.shop.invoke(t, ev)
	file := writeFile(t, "event.json", ev)
	r := w.h.run(t, append([]string{"inspect", file}, w.flags...)...).want(t, exitOK)
	wantContains(t, r, "key "+w.keyOf(t, ev), "a delivery gets the stored response")
	r = w.h.run(t, "inspect", file, "--table", w.table, "--", "-json").want(t, exitUsage)
	if !strings.Contains(r.stderr, "want at most 1 argument, got 2") {
		t.Errorf("after --: %v", r)
	}
}

// TestResourceNotInTemplate: a --resource the template does not define
// is answered with the functions it does.
func TestResourceNotInTemplate(t *testing.T) {
	t.Parallel()
	tmpl := writeFile(t, "template.yaml", `
Resources:
  PaymentsFunction:
    Type: AWS::Serverless::Function
  Table:
    Type: AWS::DynamoDB::Table
  OrdersFn:
    Type: AWS::Lambda::Function
`)
	r := (&harness{}).run(t, "inspect", "--table", "t", "--template", tmpl, "--resource", "OrdersFunction", "--key", "k").want(t, exitUsage)
	if !strings.Contains(r.stderr, `no function "OrdersFunction"; its functions: PaymentsFunction, OrdersFn`) {
		t.Errorf("%v", r)
	}
}

// TestLintHelpNamesTheActions: lint's help names each action the
// table-access rule requires.
func TestLintHelpNamesTheActions(t *testing.T) {
	t.Parallel()
	r := (&harness{}).run(t, "lint", "-help").want(t, exitOK)
	i := strings.Index(r.stderr, "table-access")
	j := strings.Index(r.stderr, "record-expiry")
	if i < 0 || j < i {
		t.Fatalf("lint -help has no table-access rule:\n%s", r.stderr)
	}
	rule := strings.Join(strings.Fields(r.stderr[i:j]), " ")
	for _, action := range lint.StoreActions {
		if !strings.Contains(rule, strings.TrimPrefix(action, "dynamodb:")) {
			t.Errorf("lint -help's table-access does not name %s: %q", action, rule)
		}
	}
}

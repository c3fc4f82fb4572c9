package main

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// codeSettings returns the string arguments of the calls to
// idempotency.WrapFunc (its name), WithEventKey and
// WithPayloadValidation in the non-test Go files of dir.
func codeSettings(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "idempotency" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				found[sel.Sel.Name] = append(found[sel.Sel.Name], s)
			}
			return true
		})
	}
	return found
}

// TestInspectTheExamples computes keys with `inspect --template
// template.yaml` for the orders function (a WrapFunc, keyed in code that
// its Metadata declares) and the payments function (keyed by its
// environment), and finds the records their code writes.
func TestInspectTheExamples(t *testing.T) {
	root := testenv.RepoRoot()
	tmplPath := filepath.Join(root, "template.yaml")
	tmpl, err := template.Read(tmplPath)
	if err != nil {
		t.Fatal(err)
	}

	// The orders code and the template's declaration of it agree.
	code := codeSettings(t, filepath.Join(root, "examples", "orders"))
	declared, err := tmpl.Function("OrdersFunction").Declared()
	if err != nil {
		t.Fatal(err)
	}
	name, key, validation := code["WrapFunc"], code["WithEventKey"], code["WithPayloadValidation"]
	if len(name) != 1 || len(key) != 1 || len(validation) != 1 {
		t.Fatalf("examples/orders: WrapFunc %q, WithEventKey %q, WithPayloadValidation %q: want one of each", name, key, validation)
	}
	if declared["WrapFunc"] != name[0] || declared["EventKey"] != key[0] || declared["PayloadValidation"] != validation[0] {
		t.Fatalf("OrdersFunction's Metadata.Idempotency is %+v; its code has WrapFunc(%q), WithEventKey(%q), WithPayloadValidation(%q)", declared, name[0], key[0], validation[0])
	}

	w := newWorld(t, testenv.MotoEnv)
	store, err := dynamo.New(w.client, func(o *dynamo.Options) { o.TableName = w.table })
	if err != nil {
		t.Fatal(err)
	}
	inspect := func(resource, function, event string) inspection {
		t.Helper()
		r := w.h.run(t, "inspect", "--json", "--template", tmplPath, "--resource", resource, "--function-name", function, "--table", w.table, writeFile(t, "event.json", event)).want(t, exitOK)
		var got inspection
		if err := parseJSON(r.stdout, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	t.Run("orders", func(t *testing.T) {
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "stack-OrdersFunction-1")
		type orderArg struct {
			OrderID  string `json:"order_id"`
			Customer string `json:"customer"`
			Amount   int64  `json:"amount"`
			Currency string `json:"currency"`
		}
		fulfil := idempotency.WrapFunc(name[0], store, func(context.Context, orderArg) (string, error) { return "f-1", nil },
			idempotency.WithEventKey(key[0]), idempotency.WithPayloadValidation(validation[0]), idempotency.WithLogger(discard))
		if _, err := fulfil(t.Context(), orderArg{OrderID: "o-1", Customer: "c-1", Amount: 1250, Currency: "EUR"}); err != nil {
			t.Fatal(err)
		}
		// The message body, as the queue holds it.
		got := inspect("OrdersFunction", "stack-OrdersFunction-1", `{"order_id":"o-1","customer":"c-1","amount":1250,"currency":"EUR"}`)
		if got.Record == nil || got.Record.Status != "COMPLETED" || got.PayloadHashMatches == nil || !*got.PayloadHashMatches ||
			!strings.HasPrefix(got.Key, "stack-OrdersFunction-1.orders.fulfil#") || got.Settings.ExpiresAfter != "96h0m0s" {
			t.Errorf("inspect of the orders function = %+v", got)
		}
	})

	t.Run("payments", func(t *testing.T) {
		fn := tmpl.Function("PaymentsFunction")
		for _, name := range []string{handler.EventKeyEnv, handler.ValidationEnv} {
			v, _ := tmpl.String(fn.Variable(name))
			t.Setenv(name, v)
		}
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "stack-PaymentsFunction-1")
		h, err := idempotency.New(store, func(context.Context, map[string]any) (string, error) { return "charged", nil }, idempotency.WithLogger(discard))
		if err != nil {
			t.Fatal(err)
		}
		const event = `{"version":"2.0","requestContext":{"requestId":"r-1"},"body":"{\"order_id\":\"p-1\",\"amount\":100,\"currency\":\"EUR\"}"}`
		if _, err := h.Invoke(t.Context(), []byte(event)); err != nil {
			t.Fatal(err)
		}
		// A retry: another request ID, the same body.
		got := inspect("PaymentsFunction", "stack-PaymentsFunction-1", strings.Replace(event, "r-1", "r-2", 1))
		if got.Record == nil || got.Record.Status != "COMPLETED" || got.PayloadHashMatches == nil || !*got.PayloadHashMatches {
			t.Errorf("inspect of the payments function = %+v", got)
		}
	})
}

// TestInspectTheGettingStartedFunction: the function of
// docs/getting-started.md (examples/minimal, whose template and code the
// guide shows whole) gets an order id again with another amount:
// inspect, given the guide's template, says what the function answers,
// the engine's *PayloadConflictError, not the stored response.
func TestInspectTheGettingStartedFunction(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testenv.RepoRoot(), "examples", "minimal")
	code := codeSettings(t, dir)
	w := newWorld(t, testenv.MotoEnv)
	const function = "shop-OrderFunction-1"
	var opts []idempotency.Option
	for _, k := range code["WithEventKey"] {
		opts = append(opts, idempotency.WithEventKey(k))
	}
	for _, v := range code["WithPayloadValidation"] {
		opts = append(opts, idempotency.WithPayloadValidation(v))
	}
	fn, err := idempotency.New(w.store, func(_ context.Context, o order) (order, error) { return o, nil },
		append(opts, idempotency.WithKeyPrefix(function), idempotency.WithLogger(discard))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fn.Invoke(t.Context(), []byte(`{"order_id":"o-2","amount":10}`)); err != nil {
		t.Fatal(err)
	}
	const again = `{"order_id":"o-2","amount":99}`
	if _, err := fn.Invoke(t.Context(), []byte(again)); !errors.As(err, new(*idempotency.PayloadConflictError)) {
		t.Fatalf("the function answers %v, want a *PayloadConflictError", err)
	}
	r := w.h.run(t, "inspect", "--template", filepath.Join(dir, "template.yaml"), "--resource", "OrderFunction",
		"--function-name", function, "--table", w.table, writeFile(t, "event.json", again)).want(t, exitOK)
	wantContains(t, r, `PayloadValidation  "amount"`, "next delivery  conflict: a delivery gets *idempotency.PayloadConflictError")
	if strings.Contains(r.stdout, "stored response") {
		t.Errorf("inspect says the delivery gets the stored response:\n%s", r.stdout)
	}
}

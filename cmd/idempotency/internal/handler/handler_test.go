package handler

import (
	"os"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestNewReadsTheFunctionsEnvironment: the handler reads the function's
// variables, not the process's, and the process's are as they were
// after.
func TestNewReadsTheFunctionsEnvironment(t *testing.T) {
	t.Setenv(template.EventKeyEnv, "shell")
	t.Setenv(template.ValidationEnv, "shell")
	env := map[string]string{template.EventKeyEnv: "id", template.FunctionNameEnv: "fn", "OTHER": "x"}
	s, err := template.Resolve(template.Code{}, env)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(idempotencytest.NewStore(), template.Code{}, s, env)
	if err != nil {
		t.Fatal(err)
	}
	key, hash, err := h.KeyOf([]byte(`{"id":"a","shell":"b"}`))
	if err != nil || !strings.HasPrefix(key, "fn#") || hash != "" {
		t.Errorf("KeyOf = %q, %q, %v; want a key of fn, keyed on id, without validation", key, hash, err)
	}
	other, _, _ := h.KeyOf([]byte(`{"id":"a","shell":"c"}`))
	if other != key {
		t.Errorf("the key depends on the shell's key path")
	}
	if os.Getenv(template.EventKeyEnv) != "shell" || os.Getenv(template.ValidationEnv) != "shell" || os.Getenv(template.FunctionNameEnv) != "" {
		t.Errorf("the process environment was not put back")
	}
}

// TestNewWrapFunc: a wrapper's handler takes its key settings from the
// code, whatever the environment says.
func TestNewWrapFunc(t *testing.T) {
	id := "order_id"
	code := template.Code{WrapFunc: "orders.fulfil", EventKey: &id}
	env := map[string]string{template.EventKeyEnv: "other", template.FunctionNameEnv: "fn"}
	s, err := template.Resolve(code, env)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(idempotencytest.NewStore(), code, s, env)
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := h.KeyOf([]byte(`{"order_id":"o-1","other":1}`))
	b, _, _ := h.KeyOf([]byte(`{"order_id":"o-1","other":2}`))
	if a != b || !strings.HasPrefix(a, "fn.orders.fulfil#") {
		t.Errorf("keys %q and %q: want one key, of fn.orders.fulfil, on order_id", a, b)
	}
}

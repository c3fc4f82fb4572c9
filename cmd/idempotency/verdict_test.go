package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TestInspectSaysWhatTheFunctionDoes: for an event that reuses a key with
// another payload, inspect's "next delivery" is the conflict that the
// function answers, with the engine's own error type; never the stored
// response under a line that says conflict.
func TestInspectSaysWhatTheFunctionDoes(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers[:3] {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			if _, err := w.shop.invoke(t, `{"order_id":"o-2","amount":10}`); err != nil {
				t.Fatal(err)
			}
			const other = `{"order_id":"o-2","amount":99}`
			_, err := w.shop.invoke(t, other)
			if !errors.As(err, new(*idempotency.PayloadConflictError)) {
				t.Fatalf("the function answers %v, want a *PayloadConflictError", err)
			}
			file := writeFile(t, "event.json", other)
			r := w.h.run(t, w.cmd("inspect", file)...).want(t, exitOK)
			wantField(t, r, "next delivery", "conflict: a delivery gets *idempotency.PayloadConflictError: the record's payload hash is "+w.get(t, w.keyOf(t, other)).PayloadHash+", the event's "+hashOf(t, w, other))
			if strings.Contains(r.stdout, "stored response") {
				t.Errorf("inspect says the delivery gets the stored response:\n%s", r.stdout)
			}
			var got inspection
			r = w.h.run(t, w.cmd("inspect", "--json", file)...).want(t, exitOK)
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got.Next.Error != "*idempotency.PayloadConflictError" || got.Next.Outcome != string(idempotency.OutcomeConflict) || got.Next.RunsHandler {
				t.Errorf("inspect --json's next = %+v", got.Next)
			}

			// A record written without validation has no hash: a
			// conflict too, and "none", not an empty hash.
			now := time.Now()
			key := w.keyOf(t, `{"order_id":"o-3","amount":1}`)
			if _, err := w.store.Acquire(t.Context(), &idempotency.Record{Key: key, Status: idempotency.StatusComplete, Expiry: now.Add(time.Hour).Truncate(time.Second), LeaseToken: "t", Response: []byte(`{}`)}, now); err != nil {
				t.Fatal(err)
			}
			r = w.h.run(t, w.cmd("inspect", writeFile(t, "o-3.json", `{"order_id":"o-3","amount":1}`))...).want(t, exitOK)
			wantContains(t, r, "the record's payload hash is none, the event's ")
			wantField(t, r, "payload hash", "none (the event's is "+hashOf(t, w, `{"order_id":"o-3","amount":1}`)+")")
		})
	}
}

func hashOf(t *testing.T, w *world, event string) string {
	t.Helper()
	_, hash, err := w.shop.h.KeyOf([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// TestInspectCompatibility: a function in Powertools Python's format,
// declared in its template's Metadata, or set by the shell's variables
// that the template does not set: inspect computes the key that Python
// does (its prefix <function>.<module.handler>, MD5), finds the record,
// and says where each setting came from.
func TestInspectCompatibility(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	// The record as the Python function writes it; a Go handler in its
	// format stands in for it.
	writer, err := idempotency.New(w.store, func(context.Context, order) (string, error) { return "fulfilled", nil },
		idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithKeyPrefix("orders.app.lambda_handler"),
		idempotency.WithEventKey("order_id"), idempotency.WithLogger(discard))
	if err != nil {
		t.Fatal(err)
	}
	const ev = `{"order_id":"o-1","amount":1}`
	if _, err := writer.Invoke(t.Context(), []byte(ev)); err != nil {
		t.Fatal(err)
	}
	key, _, _ := writer.KeyOf([]byte(ev))
	file := writeFile(t, "event.json", ev)

	declared := writeFile(t, "template.yaml", `
Resources:
  Orders:
    Type: AWS::Serverless::Function
    Metadata:
      Idempotency:
        Compatibility: python
        PythonHandler: app.lambda_handler
        EventKey: order_id
    Properties:
      Environment:
        Variables:
          POWERTOOLS_IDEMPOTENCY_TABLE: orders-table
`)
	r := w.h.run(t, "inspect", "--template", declared, "--resource", "Orders", "--function-name", "orders", "--table", w.table, file).want(t, exitOK)
	wantContains(t, r, "key "+key, `KeyPrefix          "orders.app.lambda_handler"`, "from Metadata.Idempotency.Compatibility", "completed: a delivery gets the stored response")

	shell := w.with()
	shell.env = map[string]string{
		"POWERTOOLS_IDEMPOTENCY_COMPATIBILITY":      "python",
		"POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER":     "app.lambda_handler",
		"POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER":      "2h",
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH": "amount",
	}
	plain := writeFile(t, "plain.yaml", `
Resources:
  Orders:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH: order_id
`)
	r = shell.run(t, "inspect", "--template", plain, "--resource", "Orders", "--function-name", "orders", "--table", w.table, file).want(t, exitOK)
	wantContains(t, r, "key "+key, "from POWERTOOLS_IDEMPOTENCY_COMPATIBILITY in this command's environment",
		"from POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH in the template", "completed: a delivery gets the stored response")
}

package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TestStoreFromTemplate: the table is --table, else the template's plain
// name, else this command's POWERTOOLS_IDEMPOTENCY_TABLE, also when the
// template gives one the command cannot resolve (a !Ref), which the error
// names when nothing else gives one; a function whose template names a
// Redis server and no table is on Redis, at the template's REDIS_URL.
func TestStoreFromTemplate(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	const ev = `{"order_id":"o-1","amount":1250}`
	w.shop.invoke(t, ev)
	file := writeFile(t, "event.json", ev)
	tmpl := writeFile(t, "template.yaml", `
Resources:
  Table:
    Type: AWS::DynamoDB::Table
  Ref:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: orders-fn
      Environment:
        Variables:
          POWERTOOLS_IDEMPOTENCY_TABLE: !Ref Table
          POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH: order_id
          POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH: amount
  None:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: orders-fn
      Environment:
        Variables:
          POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH: order_id
          POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH: amount
`)
	shell := &harness{endpoint: w.h.endpoint, env: map[string]string{"POWERTOOLS_IDEMPOTENCY_TABLE": w.table}}
	for _, fn := range []string{"Ref", "None"} {
		r := shell.run(t, "inspect", "--template", tmpl, "--resource", fn, file).want(t, exitOK)
		wantContains(t, r, "matches the event's", "a delivery gets the stored response")
	}
	r := (&harness{endpoint: w.h.endpoint}).run(t, "inspect", "--template", tmpl, "--resource", "Ref", file).want(t, exitFailed)
	if !strings.Contains(r.stderr, "no table: the template's POWERTOOLS_IDEMPOTENCY_TABLE is !Ref Table, which the command cannot resolve; give --table") {
		t.Errorf("a table the command cannot resolve: %v", r)
	}
	r = (&harness{endpoint: w.h.endpoint}).run(t, "inspect", "--template", tmpl, "--resource", "None", file).want(t, exitFailed)
	if !strings.Contains(r.stderr, "no table: the function names none; give --table") {
		t.Errorf("no table anywhere: %v", r)
	}

	for _, srv := range recordServers[2:3] {
		rw := srv.world(t)
		rw.shop.invoke(t, ev)
		redisTmpl := writeFile(t, "redis.yaml", `
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: orders-fn
      Environment:
        Variables:
          REDIS_URL: `+rw.redisURL+`
          POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH: order_id
          POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH: amount
`)
		for _, args := range [][]string{
			{"--redis-key-prefix", rw.redisPrefix},
			{"--store", "redis", "--redis-key-prefix", rw.redisPrefix},
		} {
			// The shell's REDIS_URL names no server: the template's wins.
			h := &harness{env: map[string]string{"REDIS_URL": "redis://127.0.0.1:1"}}
			r := h.run(t, append(append([]string{"inspect", "--template", redisTmpl, "--resource", "Fn"}, args...), file)...).want(t, exitOK)
			wantContains(t, r, "a delivery gets the stored response")
		}
	}
}

// TestAWSErrorsSayWhere: an error of a request to AWS names the table, or
// the queue, the region and the endpoint; a configuration without a
// region is refused before any request.
func TestAWSErrorsSayWhere(t *testing.T) {
	t.Parallel()
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	h := &harness{endpoint: endpoint}
	for name, args := range map[string][]string{
		"inspect": {"inspect", "--table", "no-such-table", "--key", "f#k"},
		"list":    {"list", "--table", "no-such-table"},
		"forget":  {"forget", "--table", "no-such-table", "--key", "f#k"},
		"redrive": {"redrive", "--dlq", "no-such-queue", "--dry-run"},
	} {
		t.Run(name, func(t *testing.T) {
			r := h.run(t, args...).want(t, exitFailed)
			what := "table no-such-table"
			if name == "redrive" {
				what = "dead-letter queue no-such-queue"
			}
			if !strings.Contains(r.stderr, what+" in us-east-1 at "+endpoint+": ") {
				t.Errorf("the error does not say where: %v", r)
			}
		})
	}

	// No region: refused before any request, saying so.
	sent := 0
	noRegion := &harness{endpoint: endpoint}
	c := func(args ...string) result {
		var out result
		var stdout, stderr strings.Builder
		cl := &cli{stdout: &stdout, stderr: &stderr, environ: func() []string { return nil }, now: h.nowOrNow(),
			awsConfig: func(context.Context) (aws.Config, error) {
				cfg := awsConfig(noRegion.endpoint)
				cfg.Region = ""
				cfg.HTTPClient = countingClient{&sent}
				return cfg, nil
			}, prefixScanLimit: prefixScanLimit}
		out.status = cl.run(t.Context(), args)
		out.stdout, out.stderr = stdout.String(), stderr.String()
		return out
	}
	for _, args := range [][]string{{"inspect", "--table", "t", "--key", "f#k"}, {"redrive", "--dlq", "q", "--dry-run"}} {
		r := c(args...).want(t, exitFailed)
		if !strings.Contains(r.stderr, "at "+endpoint+": no AWS region: set AWS_REGION") {
			t.Errorf("%v without a region: %v", args, r)
		}
	}
	if sent != 0 {
		t.Errorf("%d requests sent without a region", sent)
	}
}

// TestResolveInTheFunctionsFormat: resolve --completed writes the
// response in the function's record format: a Powertools TypeScript
// function's duplicates get the response, not its text as a JSON string.
func TestResolveInTheFunctionsFormat(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	h, err := idempotency.New(w.store, func(_ context.Context, o order) (map[string]int, error) {
		if o.Uncertain {
			return nil, idempotency.Uncertain(errors.New("timed out"))
		}
		return map[string]int{"charged": o.Amount}, nil
	}, idempotency.WithCompatibility(idempotency.PowertoolsTypeScript), idempotency.WithKeyPrefix("ts-fn"),
		idempotency.WithEventKey("order_id"), idempotency.WithLogger(discard))
	if err != nil {
		t.Fatal(err)
	}
	const ev = `{"order_id":"o-1","amount":5,"uncertain":true}`
	h.Invoke(t.Context(), []byte(ev))
	args := append(slices.Clone(w.where), "--compatibility", "typescript", "--key-prefix", "ts-fn", "--event-key", "order_id",
		"--completed", "--response", writeFile(t, "r.json", `{"charged":5}`), writeFile(t, "e.json", ev))
	w.h.run(t, append([]string{"resolve"}, args...)...).want(t, exitOK)
	out, err := h.Invoke(t.Context(), []byte(ev))
	if err != nil || string(out) != `{"charged":5}` {
		t.Errorf("a duplicate after resolve got %s, %v; want the response", out, err)
	}
}

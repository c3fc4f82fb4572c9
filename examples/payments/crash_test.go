package main

// Crash points: the payments function under the emulator, its process
// killed with SIGKILL at the worst moments of a payment, then the client's
// retry on a new sandbox. No hook in the function: the test stands between
// the function and its two dependencies (moto, through
// internal/testing/faultproxy, and the provider), lets the request that marks the
// point be applied, and kills the function before it hears the answer.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// crashTimeout is the function timeout under crash: the lease of a record
// ends with the invocation's deadline, so a retry waits at most this long.
const crashTimeout = 3 * time.Second

// crashWorld is a crash test's world: the e2e world, the function's own
// copy of the binary (so that the kill finds exactly this test's process),
// and the proxies in front of moto and the provider.
type crashWorld struct {
	*e2e
	binary   string
	db       *faultproxy.Proxy
	provider string   // URL of the proxy in front of x.provider
	env      []string // added to the function's environment

	mu        sync.Mutex
	killAfter bool // kill the function after the next charge reaches the provider
	killed    chan struct{}
}

func newCrashWorld(t *testing.T) *crashWorld {
	x := newE2E(t)
	c := &crashWorld{e2e: x, killed: make(chan struct{}, 1)}
	c.binary = bootstrap.Copy(t)
	var err error
	c.db, err = faultproxy.NewHTTP(x.moto)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.db.Close)
	srv := httptest.NewServer(http.HandlerFunc(c.serveProvider))
	t.Cleanup(srv.Close)
	c.provider = srv.URL
	return c
}

// serveProvider passes a charge to the provider; when armed, it kills the
// function once the provider has charged, before the function hears so.
func (c *crashWorld) serveProvider(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	c.e2e.provider.ServeHTTP(rec, r)
	c.mu.Lock()
	kill := c.killAfter
	c.killAfter = false
	c.mu.Unlock()
	if kill {
		c.kill()
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	io.Copy(w, rec.Body)
}

// kill sends SIGKILL to the function's process: the one running this
// test's copy of the binary.
func (c *crashWorld) kill() {
	if n := emulator.Kill(c.binary); n != 1 {
		c.t.Errorf("killed %d function processes, want 1", n)
	}
	c.killed <- struct{}{}
}

// sandbox starts the function under a new emulator, as Lambda does after a
// crash.
func (c *crashWorld) sandbox() *function {
	c.t.Helper()
	env := []string{
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + c.db.URL(),
		"AWS_LAMBDA_FUNCTION_NAME=payments",
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", int(crashTimeout/time.Second)),
		"POWERTOOLS_IDEMPOTENCY_TABLE=" + c.table,
		"PAYMENT_PROVIDER_URL=" + c.provider,
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH=" + eventKeyPath,
		"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH=" + validationPath,
	}
	out := &emulator.Buffer{}
	em := emulator.StartTest(c.t, emulator.Config{RIE: c.rie, Bootstrap: c.binary, Env: append(env, c.env...), Output: out})
	return &function{em: em, out: out}
}

// crash sends the payment to a sandbox that is killed at the armed point,
// and checks that the client got no payment.
func (c *crashWorld) crash(body string) {
	c.t.Helper()
	fn := c.sandbox()
	payload, err := json.Marshal(event(body))
	if err != nil {
		c.t.Fatal(err)
	}
	type result struct {
		resp emulator.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := fn.em.Invoke(ctx, payload)
		done <- result{resp, err}
	}()
	select {
	case <-c.killed:
	case <-time.After(time.Minute):
		c.t.Fatal("the crash point was never reached")
	}
	fn.em.Close()
	r := <-done
	var resp events.APIGatewayV2HTTPResponse
	if r.err == nil && json.Unmarshal(r.resp.Body, &resp) == nil && resp.StatusCode == http.StatusCreated {
		c.t.Fatalf("the killed invocation answered a payment: %s", r.resp.Body)
	}
}

// retry sends the payment again, from a new sandbox, until it answers
// something other than 409 (in progress), and returns that answer and how
// many 409s came first. The wait is bounded by the lease.
func (c *crashWorld) retry(body string) (resp events.APIGatewayV2HTTPResponse, conflicts int, waited time.Duration) {
	c.t.Helper()
	fn := c.sandbox()
	start := time.Now()
	for {
		resp = fn.pay(c.t, body)
		if resp.StatusCode != http.StatusConflict {
			return resp, conflicts, time.Since(start)
		}
		conflicts++
		if time.Since(start) > crashTimeout+5*time.Second {
			c.t.Fatalf("still in progress %v after the crash: the lease did not end", time.Since(start))
		}
		// A client's retry interval: the lease ends on the wall clock,
		// which signals nothing.
		time.Sleep(250 * time.Millisecond)
	}
}

// TestCrashPoints kills the function just after the IN_PROGRESS write,
// just after the provider charged, and just after the COMPLETE write. In
// each case the retry gets the payment, the provider has seen one
// Idempotency-Key and made one charge, and the record ends COMPLETED.
func TestCrashPoints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		arm  func(c *crashWorld)
		// wantConflicts: the retry meets the dead invocation's lease
		wantConflicts bool
		wantRequests  int
	}{
		{"after IN_PROGRESS write", func(c *crashWorld) {
			c.db.Set(faultproxy.Rule{Fault: faultproxy.ReplyLost, Op: "PutItem", BodyContains: "attribute_not_exists", Times: 1, Then: c.kill})
		}, true, 1},
		{"after provider call", func(c *crashWorld) {
			c.mu.Lock()
			c.killAfter = true
			c.mu.Unlock()
		}, true, 2},
		{"after COMPLETE write", func(c *crashWorld) {
			c.db.Set(faultproxy.Rule{Fault: faultproxy.ReplyLost, Op: "PutItem", BodyContains: `"ConditionExpression":"#token = :token"`, Times: 1, Then: c.kill})
		}, false, 1},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			c := newCrashWorld(t)
			tt.arm(c)
			c.crash(order42)
			c.db.Set()
			resp, conflicts, waited := c.retry(order42)
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("retry: %d %s, want 201", resp.StatusCode, resp.Body)
			}
			// The dead invocation's lease ended at its deadline, which came
			// before the retry began plus the function timeout; the rest
			// of the margin is the last poll's sleep and invocation.
			if waited > crashTimeout+2*time.Second {
				t.Errorf("the record stayed IN_PROGRESS %v after the retry began, longer than the lease of %v", waited, crashTimeout)
			}
			if tt.wantConflicts != (conflicts > 0) {
				t.Errorf("retry met %d 409s before the payment, want some: %v", conflicts, tt.wantConflicts)
			}
			charges := c.e2e.provider.Charges()
			if len(charges) != 1 {
				t.Fatalf("the provider made %d charges, want 1", len(charges))
			}
			var receipt Receipt
			if err := json.Unmarshal([]byte(resp.Body), &receipt); err != nil || receipt.PaymentID != charges[0].ID {
				t.Errorf("retry answered %s, want the provider's charge %s", resp.Body, charges[0].ID)
			}
			keys := c.e2e.provider.Keys()
			for _, k := range keys {
				if k != keys[0] {
					t.Errorf("the provider saw Idempotency-Keys %v, want one", keys)
					break
				}
			}
			c.wantRequests(tt.wantRequests)
			if rec := c.record(0); rec.Status != idempotency.StatusComplete {
				t.Errorf("record status %s, want %s", rec.Status, idempotency.StatusComplete)
			}
			t.Logf("%s: retry got 201 after %d 409s in %v; provider requests %d, charges %d",
				tt.name, conflicts, waited.Round(10*time.Millisecond), c.e2e.provider.Requests(), len(charges))
		})
	}
}

package main

// Crash points of a payment whose response is encrypted with KMS and
// offloaded to S3 (docs/large-and-sensitive-responses.md, "Crashes and
// retries"): the function killed with SIGKILL after S3 has stored the
// response's object and before the COMPLETE write, and after the COMPLETE
// write; then the client's retry on a new sandbox, as in the crash tests.

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// offloadedOrder is a payment whose receipt, some 600 KB once stored, is
// over the 350 KiB the record keeps: it goes to S3. Small enough that the
// retry charges well within crashTimeout.
func offloadedOrder() string { return bigOrder("order-42", 512<<10) }

// Killed after the PutObject of the response, before the COMPLETE write:
// the object is stored and no record points to it; the record stays
// IN_PROGRESS until the lease ends, then the retry runs the handler again.
// The provider gets the charge twice with one Idempotency-Key and makes
// one charge; the record then points to the retry's own object, and the
// first is an orphan for the lifecycle rule.
func TestCrashAfterObjectBeforeComplete(t *testing.T) {
	t.Parallel()
	c := newCrashWorld(t)
	r := newResponses(t, c.moto)
	c.env = r.env()
	order := offloadedOrder()
	// The process's first S3 request is the cold start's check of the
	// bucket (a GetObject); the invocation's one is the PutObject of its
	// response: moto stores the object, and the function dies before the
	// answer.
	r.s3Proxy.Set(faultproxy.Rule{Fault: faultproxy.ReplyLost, Skip: 1, Times: 1, Then: c.kill})
	c.crash(order)
	r.s3Proxy.Set()
	if got, want := r.requests(), (requestCounts{S3: 1 + 1, GenerateDataKey: 1}); got != want {
		t.Errorf("killed invocation: requests %+v, want %+v (with the cold start's check)", got, want)
	}
	if n := len(r.objects()); n != 1 {
		t.Fatalf("after the crash the bucket holds %d objects, want the one written", n)
	}
	if rec := c.record(0); rec.Status != idempotency.StatusInProgress {
		t.Fatalf("after the crash the record is %s, want %s: no COMPLETE write was sent", rec.Status, idempotency.StatusInProgress)
	}

	resp, conflicts, waited := c.retry(order)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("retry: %d %.200s, want 201", resp.StatusCode, resp.Body)
	}
	if conflicts == 0 || waited > crashTimeout+2*time.Second {
		t.Errorf("retry met %d 409s over %v: want some, for the lease of %v and no longer", conflicts, waited, crashTimeout)
	}
	c.wantRequests(2)
	wantOneCharge(t, c, resp)
	if got, want := r.requests(), (requestCounts{S3: 1 + 1, GenerateDataKey: 1}); got != want {
		t.Errorf("retry: requests %+v, want %+v (the retry's PutObject, in a new process, after its cold start's check)", got, want)
	}
	if n := len(r.objects()); n != 2 {
		t.Errorf("the bucket holds %d objects, want 2: the orphan and the retry's", n)
	}
	rec := c.record(0)
	if rec.Status != idempotency.StatusComplete {
		t.Fatalf("record %s after the retry, want %s", rec.Status, idempotency.StatusComplete)
	}
	wantEnvelope(t, rec.Response, flagKMS|flagS3, "SKU-")
	// The record holds the retry's response, which a later retry replays.
	sameResponse(t, stored(t, r, c), replayOf(resp))
	sameResponse(t, resp, c.sandbox().pay(t, order))
	t.Logf("retry got 201 after %d 409s in %v; provider requests %d, charges %d; objects 2, receipt %d bytes",
		conflicts, waited.Round(10*time.Millisecond), c.e2e.provider.Requests(), len(c.e2e.provider.Charges()), len(resp.Body))
}

// Killed after the COMPLETE write: the retry, from a new sandbox, replays
// the stored response byte for byte (one S3 GetObject, one KMS Decrypt),
// and the provider gets no second request.
func TestCrashAfterComplete(t *testing.T) {
	t.Parallel()
	c := newCrashWorld(t)
	r := newResponses(t, c.moto)
	c.env = r.env()
	order := offloadedOrder()
	c.db.Set(faultproxy.Rule{Fault: faultproxy.ReplyLost, Op: "PutItem", BodyContains: `"ConditionExpression":"#token = :token"`, Times: 1, Then: c.kill})
	c.crash(order)
	c.db.Set()
	if got, want := r.requests(), (requestCounts{S3: 1 + 1, GenerateDataKey: 1}); got != want {
		t.Errorf("killed invocation: requests %+v, want %+v (with the cold start's check)", got, want)
	}

	resp, conflicts, _ := c.retry(order)
	if conflicts != 0 {
		t.Errorf("retry met %d 409s, want none: the record was complete", conflicts)
	}
	sameResponse(t, stored(t, r, c), resp)
	if got, want := r.requests(), (requestCounts{S3: 1 + 1, GenerateDataKey: 1, Decrypt: 1}); got != want {
		t.Errorf("replay: requests %+v, want %+v (with the cold start's checks)", got, want)
	}
	c.wantRequests(1)
	wantOneCharge(t, c, resp)
	if n := len(r.objects()); n != 1 {
		t.Errorf("the bucket holds %d objects, want 1", n)
	}
	t.Logf("retry replayed %d bytes of receipt; provider requests %d", len(resp.Body), c.e2e.provider.Requests())
}

// stored is the response the record of the provider's first request
// holds, read as the function reads it.
func stored(t *testing.T, r *responses, c *crashWorld) events.APIGatewayV2HTTPResponse {
	t.Helper()
	rec := r.open(c.e2e.store, c.e2e.provider.Keys()[0])
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(rec.Response, &resp); err != nil {
		t.Fatalf("stored response: %v", err)
	}
	return resp
}

// wantOneCharge checks that the provider made one charge, under one
// Idempotency-Key, and that resp is its receipt.
func wantOneCharge(t *testing.T, c *crashWorld, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	charges := c.e2e.provider.Charges()
	if len(charges) != 1 {
		t.Fatalf("the provider made %d charges, want 1", len(charges))
	}
	for _, k := range c.e2e.provider.Keys() {
		if k != charges[0].IdempotencyKey {
			t.Errorf("the provider saw Idempotency-Keys %v, want one", c.e2e.provider.Keys())
			break
		}
	}
	var receipt Receipt
	if err := json.Unmarshal([]byte(resp.Body), &receipt); err != nil || receipt.PaymentID != charges[0].ID {
		t.Errorf("receipt of payment %q (%v), want the provider's charge %s", receipt.PaymentID, err, charges[0].ID)
	}
}

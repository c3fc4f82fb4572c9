package main

// End-to-end tests of the answers the HTTP adapter gives for the
// middleware's outcomes that the scenarios do not reach: a missing key, a
// store that fails, and an outcome being checked. Each answer is an RFC
// 9457 problem (wantProblem).

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// A key path that selects nothing, as a typo in template.yaml would: the
// key is required, so every payment gets 400 and none is charged.
func TestE2EMissingKey(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start("POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH=powertools_json(body).orderid")
	wantProblem(t, fn.pay(t, order42), http.StatusBadRequest, "missing-key")
	if n := x.items(); n != 0 {
		t.Errorf("the table holds %d items, want 0", n)
	}
	x.wantRequests(0)
}

// DynamoDB failing every conditional write that takes a key (a 500, which
// the SDK retries and then gives up on): 503 with Retry-After and no
// charge; once it is back, the retry charges.
func TestE2EStoreUnavailable(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	db, err := faultproxy.NewHTTP(x.moto)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	fn := x.start("AWS_ENDPOINT_URL_DYNAMODB=" + db.URL())
	db.Set(faultproxy.Rule{Fault: faultproxy.InternalServerError, Op: "PutItem", BodyContains: "attribute_not_exists"})
	if retry := wantProblem(t, fn.pay(t, order42), http.StatusServiceUnavailable, "store-unavailable"); retry != "1" {
		t.Errorf("Retry-After %q, want 1", retry)
	}
	if db.Counts().InjectedFault(faultproxy.InternalServerError) == 0 {
		t.Error("no fault was injected")
	}
	x.wantRequests(0)

	db.Set()
	if resp := fn.pay(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("retry once DynamoDB is back: %d %s, want 201", resp.StatusCode, resp.Body)
	}
	x.wantRequests(1)
}

// A payment whose outcome is uncertain: the record is UNCERTAIN, as a
// handler that returns an idempotency.Uncertain error leaves it (the
// payments function does not; the test writes it). A retry gets 409 that
// says the outcome is being checked, and nothing is charged again.
func TestE2EUncertainOutcome(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start()
	if resp := fn.pay(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first payment: %d %s", resp.StatusCode, resp.Body)
	}
	rec := x.record(0)
	uncertain := &idempotency.Record{
		Key: rec.Key, Status: idempotency.StatusUncertain, Expiry: time.Now().Add(time.Hour),
		LeaseToken: rec.LeaseToken, PayloadHash: rec.PayloadHash,
	}
	if err := x.store.Complete(context.Background(), uncertain); err != nil {
		t.Fatal(err)
	}
	if retry := wantProblem(t, fn.pay(t, order42), http.StatusConflict, "outcome-uncertain"); retry != "" {
		t.Errorf("Retry-After %q, want none: nobody knows when the check ends", retry)
	}
	x.wantRequests(1)
	if got := x.record(0); got.Status != idempotency.StatusUncertain {
		t.Errorf("record status %s, want %s", got.Status, idempotency.StatusUncertain)
	}
}

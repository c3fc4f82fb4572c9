package main

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

func TestE2EDuplicateIsReplayed(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start()
	first := fn.pay(t, order42)
	if first.StatusCode != http.StatusCreated || !strings.Contains(first.Body, `"status":"charged"`) {
		t.Fatalf("first payment: %d %s, want 201 charged", first.StatusCode, first.Body)
	}
	dup := fn.pay(t, order42)
	if diff := cmp.Diff(replayOf(first), dup); diff != "" {
		t.Errorf("duplicate differs from the first response marked as replayed (-want +dup):\n%s", diff)
	}
	x.wantRequests(1)
	if rec := x.record(0); rec.Status != idempotency.StatusComplete {
		t.Errorf("record status %s, want %s", rec.Status, idempotency.StatusComplete)
	}
}

func TestE2EConflictingPayment(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start()
	if resp := fn.pay(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first payment: %d %s", resp.StatusCode, resp.Body)
	}
	resp := fn.pay(t, `{"order_id":"order-42","customer":"cus_1","amount":99900,"currency":"EUR"}`)
	wantProblem(t, resp, http.StatusUnprocessableEntity, "key-reused")
	x.wantRequests(1)
}

func TestE2EInvalidPaymentLeavesNoRecord(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start()
	for _, body := range []string{
		`{"order_id":`,
		`{"customer":"cus_1","amount":1250,"currency":"EUR"}`,
		`{"order_id":"","customer":"cus_1","amount":1250,"currency":"EUR"}`,
		`{"order_id":"order-42","customer":"cus_1","amount":0,"currency":"EUR"}`,
	} {
		wantProblem(t, fn.pay(t, body), http.StatusBadRequest, "")
	}
	// The body that parsePayment reads as one order and a key search could
	// read as another: refused by the middleware, answered by the adapter.
	wantProblem(t, fn.pay(t, ambiguousOrder), http.StatusBadRequest, "ambiguous-request")
	if n := x.items(); n != 0 {
		t.Errorf("the table holds %d items after invalid payments, want 0", n)
	}
	x.wantRequests(0)
}

func TestE2EProviderFailureThenRetry(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start()
	x.provider.FailNext(1)
	if resp := fn.pay(t, order42); resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("payment with the provider down: %d %s, want 502", resp.StatusCode, resp.Body)
	}
	if n := x.items(); n != 0 {
		t.Fatalf("the table holds %d items after a failed charge, want 0: the record must be released", n)
	}
	if resp := fn.pay(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("retry: %d %s, want 201", resp.StatusCode, resp.Body)
	}
	x.wantRequests(2)
	if keys := x.provider.Keys(); keys[0] != keys[1] {
		t.Errorf("Idempotency-Keys %q: the retry must send the first request's key", keys)
	}
	if n := len(x.provider.Charges()); n != 1 {
		t.Errorf("the provider made %d charges, want 1", n)
	}
}

// While the provider holds the charge, the record is IN_PROGRESS and its
// lease ends at the deadline the emulator gave the invocation (the function
// logs the deadline its context carries; aws-lambda-go takes it from the
// emulator's Lambda-Runtime-Deadline-Ms header). Both are milliseconds, so
// they must be equal.
func TestE2ELeaseIsTheInvocationDeadline(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start()
	release := x.provider.Hold()
	defer release()
	start := time.Now()
	done := make(chan events.APIGatewayV2HTTPResponse, 1)
	go func() {
		resp, err := fn.trySend(order42)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	<-x.provider.Arrived()
	arrived := time.Now() // the invocation started between start and now

	rec := x.record(0)
	if rec.Status != idempotency.StatusInProgress {
		t.Fatalf("record status %s while the charge runs, want %s", rec.Status, idempotency.StatusInProgress)
	}
	deadline := fn.deadline(t, "order-42")
	if !rec.LeaseEnd.Equal(deadline) {
		t.Errorf("lease ends %s, want the invocation deadline %s", rec.LeaseEnd.Format(time.RFC3339Nano), deadline.Format(time.RFC3339Nano))
	}
	// And that deadline is the 10 s function timeout after the invocation,
	// which started between start and the charge's arrival (a millisecond
	// of rounding aside), however slow the machine.
	if deadline.Before(start.Add(10*time.Second-time.Millisecond)) || deadline.After(arrived.Add(10*time.Second+time.Millisecond)) {
		t.Errorf("deadline %v after the invocation was sent, the charge arriving after %v; want the 10 s timeout after it started",
			deadline.Sub(start), arrived.Sub(start))
	}
	release()
	if resp := <-done; resp.StatusCode != http.StatusCreated {
		t.Errorf("payment: %d %s, want 201", resp.StatusCode, resp.Body)
	}
}

// A provider slower than the function: Lambda stops the function at its
// timeout. The record stays IN_PROGRESS, so a duplicate meanwhile gets 409,
// until its lease (the deadline) passes; then the retry takes the key over
// and charges with the same Idempotency-Key, which the provider
// deduplicates.
func TestE2EFunctionTimeout(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	const timeout = 2 // seconds
	fn := x.start("AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(timeout), "PAYMENT_PROVIDER_TIMEOUT=1m")
	other := x.start()
	release := x.provider.Hold()
	defer release()

	done := make(chan []byte, 1)
	go func() {
		resp, err := fn.send(order42)
		if err != nil {
			t.Error(err)
		}
		done <- resp.Body
	}()
	<-x.provider.Arrived()
	before := time.Now()
	dup := other.pay(t, order42)
	after := time.Now()
	wait := wantProblem(t, dup, http.StatusConflict, "in-progress")
	if body := <-done; !strings.Contains(string(body), "Task timed out") {
		t.Fatalf("slow payment: %s, want the function to time out", body)
	}
	// Retry-After is the whole seconds left of the lease, the first
	// invocation's deadline, when the duplicate was answered.
	deadline := fn.deadline(t, "order-42")
	least, most := secondsUntil(deadline, after), secondsUntil(deadline, before)
	if n, err := strconv.Atoi(wait); err != nil || n < least || n > most {
		t.Errorf("Retry-After %q, want %d to %d: the seconds left of the lease ending %s", wait, least, most, deadline.Format(time.RFC3339Nano))
	}

	rec := x.record(0)
	if rec.Status != idempotency.StatusInProgress {
		t.Fatalf("record status %s after the timeout, want %s", rec.Status, idempotency.StatusInProgress)
	}
	if deadline := fn.deadline(t, "order-42"); !rec.LeaseEnd.Equal(deadline) {
		t.Errorf("lease ends %s, want the timed-out invocation's deadline %s", rec.LeaseEnd, deadline)
	}
	// The lease ends on the wall clock, as the server compares it: the
	// retry must come after it.
	time.Sleep(time.Until(rec.LeaseEnd) + 10*time.Millisecond)

	release()
	retry := other.pay(t, order42)
	if retry.StatusCode != http.StatusCreated {
		t.Fatalf("retry after the lease: %d %s, want 201", retry.StatusCode, retry.Body)
	}
	x.wantRequests(2)
	keys := x.provider.Keys()
	if len(keys) == 2 && keys[0] != keys[1] {
		t.Errorf("Idempotency-Keys %q, want one key", keys)
	}
	if n := len(x.provider.Charges()); n != 1 {
		t.Errorf("the provider made %d charges, want 1", n)
	}
}

// secondsUntil is a Retry-After for a lease ending at end, at now: the
// seconds left rounded up, at least 1.
func secondsUntil(end, now time.Time) int {
	return max(int((end.Sub(now)+time.Second-1)/time.Second), 1)
}

func TestE2EPanicReleasesTheRecord(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fn := x.start()
	raw := fn.invoke(t, `{"order_id":"order-42","customer":"`+panicCustomer+`","amount":1250,"currency":"EUR"}`)
	if raw.Status != http.StatusBadGateway || !strings.Contains(string(raw.Body), "fault injected") {
		t.Fatalf("panicking payment: emulator %d %s, want the panic reported", raw.Status, raw.Body)
	}
	if n := x.items(); n != 0 {
		t.Fatalf("the table holds %d items after a panic, want 0: the record must be released", n)
	}
	x.wantRequests(0)
	if resp := fn.pay(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("retry after the panic: %d %s, want 201", resp.StatusCode, resp.Body)
	}
	x.wantRequests(1)
}

// Two execution environments get the same event at the same moment, as
// when a client retries while its first request is still running: one
// charge.
func TestE2EConcurrentDuplicatesChargeOnce(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	fns := []*function{x.start(), x.start()}
	// Start both runtimes first, so that the two payments race each other
	// and not the cold starts.
	for _, fn := range fns {
		if resp := fn.pay(t, `{}`); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("warm-up: %d %s", resp.StatusCode, resp.Body)
		}
	}
	x.provider.SetDelay(200 * time.Millisecond)
	const rounds = 3
	for round := range rounds {
		body := `{"order_id":"order-` + strconv.Itoa(round) + `","customer":"cus_1","amount":1250,"currency":"EUR"}`
		var wg sync.WaitGroup
		resps := make([]events.APIGatewayV2HTTPResponse, len(fns))
		startGun := make(chan struct{})
		for i, fn := range fns {
			wg.Go(func() {
				<-startGun
				var err error
				if resps[i], err = fn.trySend(body); err != nil {
					t.Error(err)
				}
			})
		}
		close(startGun)
		wg.Wait()

		created := 0
		for _, r := range resps {
			switch r.StatusCode {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
			default:
				t.Errorf("round %d: %d %s, want 201 or 409", round, r.StatusCode, r.Body)
			}
		}
		if created == 0 {
			t.Errorf("round %d: no payment succeeded: %+v", round, resps)
		}
		x.wantRequests(round + 1)
	}
}

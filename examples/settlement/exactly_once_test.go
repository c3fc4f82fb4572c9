package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
)

// In every test below, the end state is one ledger movement, a COMPLETE
// receipt holding the answer the caller got, and a replay of that answer.

// TestCrashAroundTheTransaction kills the function just before its
// TransactWriteItems reaches DynamoDB (nothing is committed; the retry,
// after the lease, commits movement and receipt) and just after DynamoDB
// applied it (both are committed; the retry replays the receipt).
func TestCrashAroundTheTransaction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault faultproxy.Fault
	}{
		{"before", faultproxy.ResetBeforeServer},
		{"after", faultproxy.ReplyLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.proxy.Set(faultproxy.Rule{Fault: tt.fault, Op: "TransactWriteItems", Times: 1, Then: w.kill})
			w.crash("st_1", 1250)
			w.proxy.Set()
			if got := len(w.movements()); (tt.fault == faultproxy.ReplyLost) != (got == 1) {
				t.Errorf("after the crash %s the transaction: %d movements", tt.name, got)
			}
			a := w.settle("st_1", 1250)
			if a.errorType != "" {
				t.Fatalf("retry after the crash: %s", a.raw)
			}
			w.wantOneMovement("st_1", 1250, a)
		})
	}
}

// TestReplyLost loses the reply of the TransactWriteItems that DynamoDB
// applied: the SDK's retry fails on the receipt's condition, and the store
// reads the receipt back and knows it committed.
func TestReplyLost(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.proxy.Set(faultproxy.Rule{Fault: faultproxy.ReplyLost, Op: "TransactWriteItems", Times: 1})
	a := w.deliver(w.sandbox(), "st_1", 1250)
	if a.errorType != "" {
		t.Fatalf("delivery: %s", a.raw)
	}
	if n := w.proxy.Counts().Forwarded["TransactWriteItems"]; n != 2 {
		t.Errorf("TransactWriteItems forwarded %d times, want 2", n)
	}
	w.proxy.Set()
	w.wantOneMovement("st_1", 1250, a)
}

// TestRedeliveryAfterLostAck delivers the same event twice, the second time
// to another execution environment, as EventBridge does when the first
// invocation's acknowledgement was lost.
func TestRedeliveryAfterLostAck(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first := w.deliver(w.sandbox(), "st_1", 1250)
	again := w.deliver(w.sandbox(), "st_1", 1250)
	if first.errorType != "" || again.raw != first.raw {
		t.Fatalf("deliveries answered %s and %s, want one receipt twice", first.raw, again.raw)
	}
	w.wantOneMovement("st_1", 1250, first)
}

// TestConcurrentDeliveries delivers the event to two execution
// environments at once.
func TestConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fns := []*function{w.sandbox(), w.sandbox()}
	answers := make([]answer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = f.deliver("st_1", 1250)
		}()
	}
	wg.Wait()
	var settled *answer
	for i := range answers {
		switch {
		case errs[i] != nil:
			t.Fatalf("delivery %d: %v", i, errs[i])
		case answers[i].errorType == "":
			settled = &answers[i]
		case answers[i].errorType != "InProgressError":
			t.Errorf("delivery %d: %s, want a receipt or InProgressError", i, answers[i].raw)
		}
	}
	if settled == nil {
		t.Fatalf("no delivery settled: %s, %s", answers[0].raw, answers[1].raw)
	}
	if answers[0].errorType == "" && answers[1].errorType == "" && answers[0].raw != answers[1].raw {
		t.Errorf("two different receipts: %s, %s", answers[0].raw, answers[1].raw)
	}
	w.wantOneMovement("st_1", 1250, *settled)
}

// TestInvalidEvent delivers a settlement that cannot be paid: Lambda
// reports its error by the type's name, which an operator can filter on,
// and nothing is paid or recorded.
func TestInvalidEvent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.deliver(w.sandbox(), "st_1", 0)
	if a.errorType != "InvalidSettlementError" || !strings.Contains(a.raw, "amount_cents 0 is not positive") {
		t.Fatalf("a settlement of 0 answered %s, want errorType InvalidSettlementError", a.raw)
	}
	if n := len(w.movements()); n != 0 {
		t.Errorf("%d movements, want none", n)
	}
}

// TestConflict delivers a settlement id again with another amount: a typed
// error, logged with both payload hashes, and no second movement.
func TestConflict(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	f := w.sandbox()
	first := w.deliver(f, "st_1", 1250)
	if first.errorType != "" {
		t.Fatalf("first delivery: %s", first.raw)
	}
	conflict := w.deliver(f, "st_1", 9999)
	if conflict.errorType != "ConflictError" || !strings.Contains(conflict.raw, "stored hash") {
		t.Fatalf("other amount answered %s, want ConflictError", conflict.raw)
	}
	if !f.out.contains(`"stored_hash":"`) || !f.out.contains(`"event_hash":"`) {
		t.Errorf("the conflict was not logged with both hashes:\n%s", f.out)
	}
	w.wantOneMovement("st_1", 1250, first)
}

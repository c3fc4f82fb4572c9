package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// inspectJSON runs inspect --json with args and returns what it wrote.
func inspectJSON(t *testing.T, h *harness, status int, args ...string) inspection {
	t.Helper()
	r := h.run(t, append([]string{"inspect", "--json"}, args...)...).want(t, status)
	var got inspection
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("inspect --json wrote %v: %v", r, err)
	}
	return got
}

// TestInspectWhatTheCommandCannotSee: an event whose key reads, but which
// does not decode into the handler's input type, meets
// *UndecodableEventError in the function; inspect, which cannot see the
// type, does not say that the handler runs without saying so, and names
// the error and outcome the function gives then.
func TestInspectWhatTheCommandCannotSee(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	const ev = `{"order_id":"o-5","amount":"abc"}`
	if _, err := w.shop.invoke(t, ev); !errors.As(err, new(*idempotency.UndecodableEventError)) {
		t.Fatalf("the function answers %v", err)
	}
	file := writeFile(t, "event.json", ev)
	got := inspectJSON(t, w.h, exitOK, append(slices.Clone(w.flags), file)...)
	u := got.Next.Undecodable
	if u == nil || u.RunsHandler || u.Outcome != string(idempotency.OutcomeUndecodableEvent) || u.Error != "*idempotency.UndecodableEventError" {
		t.Errorf("inspect --json's next = %+v, undecodable %+v", got.Next, u)
	}
	r := w.h.run(t, w.cmd("inspect", file)...).want(t, exitOK)
	wantContains(t, r, "a delivery runs the handler; unless the event does not decode into the handler's input type, which the command cannot see: then a delivery gets *idempotency.UndecodableEventError, and the handler does not run")

	// A replay needs no decoding: nothing to add.
	w.shop.invoke(t, `{"order_id":"o-5","amount":5}`)
	if got := inspectJSON(t, w.h, exitOK, append(slices.Clone(w.flags), writeFile(t, "dup.json", `{"order_id":"o-5","amount":"5"}`))...); got.Next.Undecodable != nil || got.Next.RunsHandler {
		t.Errorf("a duplicate: %+v", got.Next)
	}
}

// TestInspectNewOutcome: a delivery that runs the handler is told the
// outcome of a handler that succeeds, as the function's observer is: new,
// not released (which is a handler's failure).
func TestInspectNewOutcome(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	file := writeFile(t, "event.json", `{"order_id":"o-9","amount":1}`)
	got := inspectJSON(t, w.h, exitOK, append(slices.Clone(w.flags), file)...)
	if got.Record != nil || !got.Next.RunsHandler || got.Next.Outcome != string(idempotency.OutcomeNew) || got.Next.Error != "" {
		t.Errorf("no record: next = %+v", got.Next)
	}
	w.shop.invoke(t, `{"order_id":"o-9","amount":1}`)
	if o := w.shop.lastOutcome(); o != idempotency.OutcomeNew {
		t.Fatalf("the function's outcome: %s", o)
	}
}

// TestInspectEventWithoutKey: an event without a key, none required, is
// one the function runs without idempotency: inspect says so, in text and
// JSON, and succeeds; one the function refuses is answered too, with exit
// 1.
func TestInspectEventWithoutKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	noKey := writeFile(t, "nokey.json", `{"amount":1}`)
	r := w.h.run(t, w.cmd("inspect", noKey)...).want(t, exitOK)
	wantContains(t, r, "no key: the event has no key: a delivery runs the handler without idempotency")
	got := inspectJSON(t, w.h, exitOK, append(slices.Clone(w.flags), noKey)...)
	if got.Key != "" || !got.Next.RunsHandler || got.Next.Outcome != string(idempotency.OutcomeNoKey) {
		t.Errorf("inspect --json of an event without key: %+v", got)
	}

	got = inspectJSON(t, w.h, exitFailed, append(slices.Clone(w.flags), "--key-required", noKey)...)
	if got.Next.RunsHandler || got.Next.Outcome != string(idempotency.OutcomeMissingKey) || got.Next.Error != "*idempotency.MissingKeyError" {
		t.Errorf("inspect --json of an event without key, one required: %+v", got.Next)
	}
	got = inspectJSON(t, w.h, exitFailed, append(slices.Clone(w.flags), writeFile(t, "twice.json", `{"order_id":"a","order_id":"b"}`))...)
	if got.Next.Outcome != string(idempotency.OutcomeInvalidEvent) || got.Next.Error != "*idempotency.InvalidEventError" {
		t.Errorf("inspect --json of an ambiguous event: %+v", got.Next)
	}
}

// TestInspectAbandonPolicy: a record of a function whose abandon policy
// holds the key past its invocation's deadline shows one lease end for a
// delivery, the deadline that *InProgressError gives, and says what comes
// after it: *AbandonedError under block.
func TestInspectAbandonPolicy(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	now := time.Now()
	deadline := now.Add(3 * time.Second).Truncate(time.Millisecond)
	expiry := now.Add(59 * time.Minute).Truncate(time.Second)
	const ev = `{"order_id":"o-7","amount":1}`
	key, hash := w.keyOf(t, ev), hashOf(t, w, ev)
	if _, err := w.store.Acquire(t.Context(), &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: expiry, LeaseEnd: expiry, Deadline: deadline, LeaseToken: "t", PayloadHash: hash}, now); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "event.json", ev)
	block := append(slices.Clone(w.flags), "--abandon-policy", "block")
	got := inspectJSON(t, w.h, exitOK, append(block, file)...)
	then := got.Next.Then
	if got.Next.Error != "*idempotency.InProgressError" || got.Next.LeaseEnd != timestamp(deadline) || got.Record.Deadline != timestamp(deadline) ||
		then == nil || then.Error != "*idempotency.AbandonedError" || then.Outcome != string(idempotency.OutcomeAbandoned) || then.At != timestamp(deadline.Add(idempotency.AbandonGrace)) {
		t.Errorf("inspect --json: next %+v, then %+v, record %+v", got.Next, then, got.Record)
	}
	r := w.h.run(t, append([]string{"inspect"}, append(block, file)...)...).want(t, exitOK)
	wantContains(t, r, "a delivery gets *idempotency.InProgressError until "+timestamp(deadline),
		"; then the key is abandoned (its record holds it past its invocation's deadline: an abandon policy of block): a delivery gets *idempotency.AbandonedError until the record expires, "+timestamp(expiry))
	wantField(t, r, "deadline", when(deadline, time.Now())+" (its invocation's; the lease holds the key past it)")

	// A record of a function whose policy is retry: the next delivery
	// after the lease end runs the handler.
	const retry = `{"order_id":"o-8","amount":1}`
	if _, err := w.store.Acquire(t.Context(), &idempotency.Record{Key: w.keyOf(t, retry), Status: idempotency.StatusInProgress, Expiry: expiry, LeaseEnd: deadline, LeaseToken: "t", PayloadHash: hashOf(t, w, retry)}, now); err != nil {
		t.Fatal(err)
	}
	got = inspectJSON(t, w.h, exitOK, append(slices.Clone(w.flags), writeFile(t, "retry.json", retry))...)
	if got.Next.LeaseEnd != timestamp(deadline) || got.Next.Then == nil || !got.Next.Then.RunsHandler {
		t.Errorf("retry: next %+v, then %+v", got.Next, got.Next.Then)
	}
}

// TestInspectKeyOfWithDefaults: a function whose code gives its key
// prefix in WithDefaults keys its records under its name, which inspect,
// given the name, computes.
func TestInspectKeyOfWithDefaults(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	h, err := idempotency.New(w.store, func(context.Context, order) (string, error) { return "done", nil },
		idempotency.WithDefaults(idempotency.WithKeyPrefix("code")), idempotency.WithEventKey("order_id"),
		idempotency.WithEnvironment(map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "orders-prod"}), idempotency.WithLogger(discard))
	if err != nil {
		t.Fatal(err)
	}
	const ev = `{"order_id":"o-1","amount":1}`
	if _, err := h.Invoke(t.Context(), []byte(ev)); err != nil {
		t.Fatal(err)
	}
	key, _, _ := h.KeyOf([]byte(ev))
	got := inspectJSON(t, w.h, exitOK, append(slices.Clone(w.where), "--event-key", "order_id", "--function-name", "orders-prod", writeFile(t, "e.json", ev))...)
	if got.Key != key || got.Record == nil || !strings.HasPrefix(key, "orders-prod#") {
		t.Errorf("inspect computes %q (record %v); the function keys %q", got.Key, got.Record != nil, key)
	}
}

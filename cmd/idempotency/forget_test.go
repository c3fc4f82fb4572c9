package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// before returns an API option that runs fn once, just before the
// command's first request of the operation op is sent: a way to make
// something happen between the command's read and its write.
func before(op string, fn func()) func(*middleware.Stack) error {
	var once sync.Once
	return func(stack *middleware.Stack) error {
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("before"+op,
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if awsmiddleware.GetOperationName(ctx) == op {
					once.Do(fn)
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.Before)
	}
}

// startBlocked starts an invocation of event that holds its lease until
// the returned function lets it go, which then waits for it to end.
func (s *shop) startBlocked(t *testing.T, event string) (finish func() error) {
	t.Helper()
	s.mu.Lock()
	s.entered, s.block = make(chan struct{}), make(chan struct{})
	block := s.block
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := s.h.Invoke(context.Background(), []byte(event))
		done <- err
	}()
	<-s.entered
	s.mu.Lock()
	s.block = nil
	s.mu.Unlock()
	return sync.OnceValue(func() error {
		close(block)
		return <-done
	})
}

func TestForget(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			const ev = `{"order_id":"o-1","amount":1250}`
			w.shop.invoke(t, ev)
			w.shop.invoke(t, `{"order_id":"o-2","amount":1}`) // another record of the function
			key := w.keyOf(t, ev)
			file := writeFile(t, "event.json", ev)
			rec := w.get(t, key)

			// Not the record the operator saw: refused, kept.
			r := w.h.run(t, w.cmd("forget", "--token", "0123", file)...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "not the record you saw") || w.get(t, key) == nil {
				t.Errorf("forget with another token: %v", r)
			}
			w.h.run(t, w.cmd("forget", "--status", "UNCERTAIN", file)...).want(t, exitFailed)

			// As seen: deleted, and the event runs again. What a delivery
			// met before the delete is not shown as if it still held.
			r = w.h.run(t, w.cmd("forget", "--token", rec.LeaseToken, "--status", "completed", file)...).want(t, exitOK)
			wantContains(t, r, "deleted", key, rec.LeaseToken, "COMPLETED", "now no record of key "+key+": a delivery runs the handler")
			if strings.Contains(r.stdout, "gets the stored response") {
				t.Errorf("forget shows the deleted record's verdict:\n%s", r.stdout)
			}
			if w.get(t, key) != nil {
				t.Fatal("the record is still there")
			}

			// Run again, as a runbook is: the record is already gone,
			// which is what was asked.
			r = w.h.run(t, w.cmd("forget", "--token", rec.LeaseToken, "--status", "completed", file)...).want(t, exitOK)
			wantContains(t, r, "no record of key "+key+": already gone")
			w.h.run(t, w.at("forget", "--key", "orders-fn#nothing")...).want(t, exitOK)

			w.shop.invoke(t, ev)
			if n := w.shop.effectsOf("o-1"); n != 2 {
				t.Errorf("after forget, the effect ran %d times, want 2", n)
			}
		})
	}
}

// TestForgetLiveInvocation: a record whose invocation still runs is kept
// unless forced; forced, it is deleted, and the invocation, when it
// ends, finds its lease lost and writes nothing.
func TestForgetLiveInvocation(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			const ev = `{"order_id":"o-live","amount":1}`
			finish := w.shop.startBlocked(t, ev)
			defer finish()
			key := w.keyOf(t, ev)
			file := writeFile(t, "event.json", ev)

			r := w.h.run(t, w.cmd("forget", file)...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "live lease") || w.get(t, key).Status != idempotency.StatusInProgress {
				t.Errorf("forget of a live lease: %v", r)
			}
			r = w.h.run(t, w.cmd("forget", "--force", file)...).want(t, exitOK)
			wantContains(t, r, "deleted", "INPROGRESS")
			if err := finish(); err != nil {
				t.Fatal(err)
			}
			if got := w.shop.lastOutcome(); got != idempotency.OutcomeLeaseLost {
				t.Errorf("the invocation ended %s, want lease_lost", got)
			}
			if rec := w.get(t, key); rec != nil {
				t.Errorf("after a forced forget, the invocation wrote %+v", rec)
			}
		})
	}
}

// TestForgetRecordDeletedMeanwhile: the record is gone when forget's
// conditional delete runs, deleted by another operator, or by forget's own
// request whose reply was lost and which the client sent again (the retry
// fails its condition). Either way the key is free, as forget was asked:
// it says so and succeeds, as resolve --failed does.
func TestForgetRecordDeletedMeanwhile(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			for _, command := range [][]string{{"forget"}, {"resolve", "--failed"}} {
				ev := fmt.Sprintf(`{"order_id":"o-gone-%s","amount":1,"uncertain":%v}`, command[0], command[0] == "resolve")
				w.shop.invoke(t, ev)
				key := w.keyOf(t, ev)
				racer := w.beforeWrite(func() {
					if err := w.store.Release(t.Context(), key, w.get(t, key).LeaseToken); err != nil || w.get(t, key) != nil {
						t.Errorf("the record is not deleted: %v", err)
					}
				})
				r := racer.run(t, w.cmd(command[0], append(command[1:], writeFile(t, "event.json", ev))...)...).want(t, exitOK)
				wantContains(t, r, "no record of key", "by this request (a retry after a lost reply) or by another meanwhile")
				if rec := w.get(t, key); rec != nil {
					t.Errorf("%s: the record is %+v, want none", command[0], rec)
				}
			}
		})
	}
}

// TestForgetRacesCompletion: the invocation completes between forget's
// read (INPROGRESS, forced) and its delete. The delete is conditioned on
// the record forget showed, so the response is kept: forget says so, and
// the event is not run again.
func TestForgetRacesCompletion(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			const ev = `{"order_id":"o-race","amount":1}`
			finish := w.shop.startBlocked(t, ev)
			defer finish()
			key := w.keyOf(t, ev)
			racer := w.beforeWrite(func() {
				if err := finish(); err != nil {
					t.Error(err)
				}
			})
			r := racer.run(t, w.cmd("forget", "--force", writeFile(t, "event.json", ev))...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "not deleted: the record changed meanwhile") {
				t.Errorf("forget: %v", r)
			}
			wantContains(t, r, "the record now", "COMPLETED")
			if rec := w.get(t, key); rec == nil || rec.Status != idempotency.StatusComplete {
				t.Fatalf("the completed record is gone: %+v", rec)
			}
			if out, err := w.shop.invoke(t, ev); err != nil || w.shop.effectsOf("o-race") != 1 {
				t.Errorf("a duplicate got %s, %v, and the effect ran %d times; want the stored response, once", out, err, w.shop.effectsOf("o-race"))
			}
		})
	}
}

// TestForgetConcurrently runs forced forgets against invocations that
// complete before, after, or at the same moment, many times: whichever
// comes first, a record is either deleted before it completed (and the
// invocation finds its lease lost) or kept completed (and forget says it
// changed); never is a completed response deleted.
func TestForgetConcurrently(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) { forgetConcurrently(t, srv.world(t)) })
	}
}

func forgetConcurrently(t *testing.T, w *world) {
	file := writeFile(t, "event.json", "")
	deleted, kept := 0, 0
	for i := range 12 {
		ev := `{"order_id":"o-` + strings.Repeat("x", i) + `","amount":1}`
		if err := writeTo(file, ev); err != nil {
			t.Fatal(err)
		}
		finish := w.shop.startBlocked(t, ev)
		key := w.keyOf(t, ev)
		// The operator saw it INPROGRESS, and forces it.
		forget := func() result { return w.h.run(t, w.cmd("forget", "--status", "inprogress", "--force", file)...) }
		var r result
		var err error
		const forgetFirst, finishFirst, together = 0, 1, 2
		order := i % 3
		switch order {
		case forgetFirst:
			r = forget()
			err = finish()
		case finishFirst:
			err = finish()
			r = forget()
		case together:
			start := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() { <-start; r = forget() })
			wg.Go(func() { <-start; err = finish() })
			close(start)
			wg.Wait()
		}
		if err != nil {
			t.Fatal(err)
		}
		rec := w.get(t, key)
		switch outcome := w.shop.lastOutcome(); {
		case order != finishFirst && r.status == exitOK && rec == nil && outcome == idempotency.OutcomeLeaseLost:
			deleted++
		case order != forgetFirst && r.status == exitFailed && rec != nil && rec.Status == idempotency.StatusComplete && outcome == idempotency.OutcomeNew:
			kept++
		default:
			t.Errorf("round %d: forget %v; record %+v; invocation %s", i, r, rec, outcome)
		}
	}
	t.Logf("%d forgets came first, %d completions", deleted, kept)
}

func TestResolve(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			uncertain := func(id string) (string, string) {
				t.Helper()
				ev := `{"order_id":"` + id + `","amount":7,"uncertain":true}`
				if _, err := w.shop.invoke(t, ev); !errors.As(err, new(*idempotency.UncertainError)) {
					t.Fatalf("first call: %v, want an UncertainError", err)
				}
				if _, err := w.shop.invoke(t, ev); !errors.As(err, new(*idempotency.UncertainError)) {
					t.Fatalf("duplicate: %v, want an UncertainError", err)
				}
				return ev, writeFile(t, id+".json", ev)
			}
			response := writeFile(t, "response.json", "{\n  \"order_id\": \"u-1\",\n  \"status\": \"fulfilled by hand\"\n}\n")

			// It happened: COMPLETED with the response, which duplicates get.
			ev, file := uncertain("u-1")
			r := w.h.run(t, w.cmd("resolve", "--completed", "--response", response, file)...).want(t, exitOK)
			wantContains(t, r, "was", "UNCERTAIN", "resolved as completed", "COMPLETED")
			out, err := w.shop.invoke(t, ev)
			if err != nil || string(out) != `{"order_id":"u-1","status":"fulfilled by hand"}` || w.shop.effectsOf("u-1") != 1 {
				t.Errorf("after resolve --completed, a duplicate got %s, %v (effects %d)", out, err, w.shop.effectsOf("u-1"))
			}
			// Already resolved: refused.
			r = w.h.run(t, w.cmd("resolve", "--failed", file)...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "not UNCERTAIN") {
				t.Errorf("resolve of a COMPLETED record: %v", r)
			}

			// It did not: deleted, and the next delivery runs the handler.
			// Run again, it finds the record gone, as asked.
			ev, file = uncertain("u-2")
			r = w.h.run(t, w.cmd("resolve", "--failed", file)...).want(t, exitOK)
			wantContains(t, r, "resolved as failed: deleted", "now no record of key")
			if strings.Contains(r.stdout, "UncertainError") {
				t.Errorf("resolve --failed shows the deleted record's verdict:\n%s", r.stdout)
			}
			r = w.h.run(t, w.cmd("resolve", "--failed", file)...).want(t, exitOK)
			wantContains(t, r, "already gone")
			w.h.run(t, w.cmd("resolve", "--completed", "--response", response, file)...).want(t, exitFailed)
			w.shop.invoke(t, strings.Replace(ev, `,"uncertain":true`, "", 1))
			if n := w.shop.effectsOf("u-2"); n != 2 {
				t.Errorf("after resolve --failed, the effect ran %d times, want 2", n)
			}

			// A reconciler holds it: refused unless forced.
			_, file = uncertain("u-3")
			key := w.keyOf(t, `{"order_id":"u-3"}`)
			rec := w.get(t, key)
			reconciling := *rec
			reconciling.LeaseToken, reconciling.LeaseEnd = "reconciler", time.Now().Add(time.Minute).Truncate(time.Millisecond)
			if err := w.store.Reclaim(t.Context(), &reconciling, rec.LeaseToken); err != nil {
				t.Fatal(err)
			}
			r = w.h.run(t, w.cmd("resolve", "--failed", file)...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "live lease") {
				t.Errorf("resolve of a record being reconciled: %v", r)
			}
			w.h.run(t, w.cmd("resolve", "--failed", "--force", file)...).want(t, exitOK)

			// Reclaimed between resolve's read and its write: not written.
			_, file = uncertain("u-4")
			key = w.keyOf(t, `{"order_id":"u-4"}`)
			racer := w.beforeWrite(func() {
				rec := w.get(t, key)
				taken := *rec
				taken.LeaseToken = "reconciler"
				if err := w.store.Reclaim(context.Background(), &taken, rec.LeaseToken); err != nil {
					t.Error(err)
				}
			})
			r = racer.run(t, w.cmd("resolve", "--completed", "--response", response, file)...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "not resolved: the record changed meanwhile") || w.get(t, key).LeaseToken != "reconciler" {
				t.Errorf("resolve racing a reconciler: %v", r)
			}

			for name, args := range map[string][]string{
				"neither":           w.at("resolve", "--key", key),
				"both":              w.at("resolve", "--key", key, "--completed", "--failed"),
				"no response":       w.at("resolve", "--key", key, "--completed"),
				"response, failed":  w.at("resolve", "--key", key, "--failed", "--response", response),
				"response not JSON": w.at("resolve", "--key", key, "--completed", "--response", writeFile(t, "r.txt", "fulfilled")),
			} {
				if r := w.h.run(t, args...); r.status != exitUsage {
					t.Errorf("%s: want exit %d, got %v", name, exitUsage, r)
				}
			}
		})
	}
}

// TestForgetAnotherPrefix: a key without a record is "already gone" only
// where its prefix has records: a key under another function's name (a
// --function-name that is not the deployed one), or in a store without any
// record of its prefix, is refused, and the answer says what the scan
// read and which prefixes it found.
func TestForgetAnotherPrefix(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers[:3] {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			const ev = `{"order_id":"o-1","amount":1}`
			empty := w.h.run(t, w.cmd("forget", writeFile(t, "e.json", ev))...).want(t, exitFailed)
			if !strings.Contains(empty.stderr, "has its prefix orders-fn, nor any other") {
				t.Errorf("an empty store: %v", empty)
			}
			w.shop.invoke(t, ev)
			w.shop.invoke(t, `{"order_id":"o-2","amount":1}`)
			file := writeFile(t, "event.json", ev)

			r := w.h.run(t, append(w.cmd("forget", file), "--function-name", "orders-prod")...).want(t, exitFailed)
			for _, want := range []string{"no record of key orders-prod#", "none of the 2 ", "has its prefix orders-prod; the prefixes there: orders-fn (2 records)", "function's name not the deployed one's"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("forget under another name: no %q in %v", want, r)
				}
			}
			if w.get(t, w.keyOf(t, ev)) == nil {
				t.Error("the function's record is gone")
			}
			w.h.run(t, w.at("forget", "--key", "orders-prod#00d5c8b71f851bbe47626a189b20fb19c11753e244bb658095c370ba3798f85c")...).want(t, exitFailed)
			// A key of the function's prefix that has no record: done.
			wantContains(t, w.h.run(t, w.at("forget", "--key", "orders-fn#0000")...).want(t, exitOK), "already gone")

			// A bounded scan says that it was.
			bounded := w.with()
			bounded.prefixScanLimit = 1
			r = bounded.run(t, append(w.cmd("forget", file), "--function-name", "orders-prod")...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "(it has more, which were not read)") {
				t.Errorf("a bounded scan: %v", r)
			}
		})
	}
}

// TestForgetUnreadable: a record that cannot be read blocks its key until
// it expires; forget deletes it with --force, which it asks for, and the
// next delivery runs the handler.
func TestForgetUnreadable(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			const ev = `{"order_id":"o-1","amount":1}`
			key := w.keyOf(t, ev)
			w.putCorrupted(t, key)
			if _, err := w.shop.invoke(t, ev); !errors.As(err, new(*idempotency.CorruptedRecordError)) {
				t.Fatalf("the function answers %v", err)
			}
			file := writeFile(t, "event.json", ev)

			got := inspectJSON(t, w.h, exitOK, append(slices.Clone(w.flags), file)...)
			if got.Corrupted == "" || got.Next.Error != "*idempotency.CorruptedRecordError" || got.Next.Outcome != string(idempotency.OutcomeStoreError) {
				t.Errorf("inspect --json of a record that cannot be read: %+v", got)
			}
			r := w.h.run(t, w.cmd("forget", file)...).want(t, exitFailed)
			if !strings.Contains(r.stderr, "give --force") {
				t.Errorf("forget without --force: %v", r)
			}
			w.h.run(t, w.cmd("forget", "--force", "--token", "x", file)...).want(t, exitFailed)
			wantContains(t, w.h.run(t, w.cmd("forget", "--force", "--dry-run", file)...).want(t, exitOK), "would delete it")
			r = w.h.run(t, w.cmd("forget", "--force", file)...).want(t, exitOK)
			wantContains(t, r, "deleted", "now no record of key "+key+": a delivery runs the handler")
			if _, err := w.shop.invoke(t, ev); err != nil {
				t.Errorf("after forget, the function answers %v", err)
			}

			if w.redisURL == "" {
				return
			}
			// A string at the key, as Powertools for Python's Redis layer
			// writes its records.
			const other = `{"order_id":"o-2","amount":1}`
			client, err := newRedisClient(w.redisURL, slices.Contains(w.where, "--cluster"))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			if err := client.Set(t.Context(), w.redisPrefix+w.keyOf(t, other), `{"status":"COMPLETED"}`, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			other2 := writeFile(t, "other.json", other)
			wantContains(t, w.h.run(t, w.cmd("forget", "--force", other2)...).want(t, exitOK), "deleted", "now no record of key")
			if n, _ := client.Exists(t.Context(), w.redisPrefix+w.keyOf(t, other)).Result(); n != 0 {
				t.Error("the string is still there")
			}
		})
	}
}

// TestForgetDryRun: forget --dry-run says what it would delete, and
// deletes nothing; what it refuses, it refuses as forget does.
func TestForgetDryRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	const ev = `{"order_id":"o-1","amount":1}`
	w.shop.invoke(t, ev)
	file := writeFile(t, "event.json", ev)
	r := w.h.run(t, w.cmd("forget", "--dry-run", file)...).want(t, exitOK)
	wantContains(t, r, "would delete", "COMPLETED", "then a delivery runs the handler; nothing deleted (--dry-run)")
	if w.get(t, w.keyOf(t, ev)) == nil {
		t.Fatal("a dry run deleted the record")
	}
	w.h.run(t, w.cmd("forget", "--dry-run", "--status", "uncertain", file)...).want(t, exitFailed)
	w.h.run(t, w.cmd("forget", "--dry-run", "--status", "bogus", file)...).want(t, exitUsage)
}

// TestResolveResponseAsStored: resolve --completed stores the response's
// bytes; a Handler's duplicates get them as they are, even when they do not
// decode into its result type, as resolve's help says.
func TestResolveResponseAsStored(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	const ev = `{"order_id":"u-1","amount":7,"uncertain":true}`
	w.shop.invoke(t, ev)
	file := writeFile(t, "event.json", ev)
	w.h.run(t, w.cmd("resolve", "--completed", "--response", writeFile(t, "r.json", `[ "not", "a map" ]`), file)...).want(t, exitOK)
	out, err := w.shop.invoke(t, ev)
	if err != nil || string(out) != `["not","a map"]` {
		t.Errorf("a Handler's duplicate got %s, %v; want the bytes as stored", out, err)
	}
	help := w.h.run(t, "resolve", "-help").want(t, exitOK)
	if text := strings.Join(strings.Fields(help.stderr), " "); !strings.Contains(text, "a Handler's duplicates get these bytes as they are") || strings.Contains(text, "a duplicate decodes it into the handler's result type") {
		t.Errorf("resolve -help:\n%s", help.stderr)
	}
}

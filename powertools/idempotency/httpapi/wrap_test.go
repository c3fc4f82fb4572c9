package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/httpapi"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// outcomes are the cases that every kind runs.
var outcomes = []struct {
	name string
	run  func(t *testing.T, k kind)
}{
	{"first request, then its replay", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		first := f.mustCall(pay("k1"))
		if first.status != http.StatusCreated || first.body != `{"run":1}` {
			t.Fatalf("first: %d %s, want the handler's 201", first.status, first.body)
		}
		if v, n := first.header("Idempotency-Replayed"); n != 0 {
			t.Errorf("first response marked replayed: %q", v)
		}
		dup := f.mustCall(pay("k1"))
		if dup.status != http.StatusCreated || dup.body != first.body {
			t.Errorf("replay: %d %s, want the stored %d %s", dup.status, dup.body, first.status, first.body)
		}
		if v, n := dup.header("Idempotency-Replayed"); v != "true" || n != 1 {
			t.Errorf("replay: Idempotency-Replayed %q (%d values), want true", v, n)
		}
		if ct, _ := dup.header("Content-Type"); ct != "application/json" {
			t.Errorf("replay: the stored headers are lost: %+v %+v", dup.headers, dup.multi)
		}
		f.wantRuns(1)
	}},
	{"replay header replaces the stored one's", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		f.reply = func(int, httpReq) (httpResp, error) {
			resp := created(`{}`)
			resp.headers["idempotency-replayed"] = "false"
			return resp, nil
		}
		f.mustCall(pay("k1"))
		dup := f.mustCall(pay("k1"))
		var names []string
		for name := range dup.headers {
			names = append(names, name)
		}
		for name := range dup.multi {
			names = append(names, name)
		}
		n := 0
		for _, name := range names {
			if strings.EqualFold(name, "Idempotency-Replayed") {
				n++
			}
		}
		if v, _ := dup.header("Idempotency-Replayed"); v != "true" || n != 1 {
			t.Errorf("replay headers %v %v, want Idempotency-Replayed: true alone", dup.headers, dup.multi)
		}
	}},
	{"replay header renamed, or none", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil, httpapi.WithReplayedHeader("X-Replayed"))
		f.mustCall(pay("k1"))
		dup := f.mustCall(pay("k1"))
		if v, _ := dup.header("X-Replayed"); v != "true" {
			t.Errorf("X-Replayed %q, want true", v)
		}
		if _, n := dup.header("Idempotency-Replayed"); n != 0 {
			t.Error("Idempotency-Replayed set though renamed")
		}
		f = newFixture(t, k, nil, httpapi.WithReplayedHeader(""))
		first := f.mustCall(pay("k1"))
		if dup := f.mustCall(pay("k1")); len(dup.headers)+len(dup.multi) != len(first.headers)+len(first.multi) {
			t.Errorf("replay headers %+v %+v, want the stored ones only", dup.headers, dup.multi)
		}
	}},
	{"in progress: 409 with Retry-After", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		f.mustCall(pay("k1"))
		rec := f.record()
		// Another invocation holds the key for 30 s more.
		rec.Status, rec.Response, rec.LeaseToken = idempotency.StatusInProgress, nil, "other"
		rec.LeaseEnd = time.Now().Add(30 * time.Second)
		f.store.Put(&rec)
		wantSeconds(t, wantProblem(t, f.mustCall(pay("k1")), http.StatusConflict, "in-progress"), 30)
		f.wantRuns(1)
	}},
	{"payload conflict: 422", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		f.mustCall(pay("k1"))
		other := pay("k1")
		other.body = `{"amount":500}`
		if retry := wantProblem(t, f.mustCall(other), http.StatusUnprocessableEntity, "key-reused"); retry != "" {
			t.Errorf("Retry-After %q on a 422", retry)
		}
		f.wantRuns(1)
	}},
	// The handler decodes another body when isBase64Encoded says the
	// text is base64: the same text with the flag flipped is another
	// payload, whichever came first.
	{"body encoding flipped: 422", func(t *testing.T, k kind) {
		for _, first := range []bool{false, true} {
			f := newFixture(t, k, nil)
			req := pay("k1")
			req.body, req.base64 = "eyJhbW91bnQiOjV9", first // {"amount":5}
			f.mustCall(req)
			req.base64 = !first
			wantProblem(t, f.mustCall(req), http.StatusUnprocessableEntity, "key-reused")
			f.wantRuns(1)
		}
	}},
	// Records written while the default validation was the body alone
	// (an in-flight request, or a completed one whose client retries
	// across the deploy) are answered from their record: replayed, or
	// in progress, not refused as another payload.
	{"record of the former default: replayed", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		before := newFixture(t, k, f.store, httpapi.WithOptions(idempotency.WithPayloadValidation("body")))
		first := before.mustCall(pay("k1"))
		dup := f.mustCall(pay("k1"))
		if dup.status != first.status || dup.body != first.body {
			t.Errorf("retry after the deploy: %d %s, want the replay of %d %s", dup.status, dup.body, first.status, first.body)
		}
		if v, _ := dup.header("Idempotency-Replayed"); v != "true" {
			t.Errorf("retry after the deploy not marked replayed")
		}
		other := pay("k1")
		other.body = `{"amount":500}`
		wantProblem(t, f.mustCall(other), http.StatusUnprocessableEntity, "key-reused")
		rec := f.record()
		rec.Status, rec.Response, rec.LeaseToken = idempotency.StatusInProgress, nil, "other"
		rec.LeaseEnd = time.Now().Add(30 * time.Second)
		f.store.Put(&rec)
		wantProblem(t, f.mustCall(pay("k1")), http.StatusConflict, "in-progress")
		if runs := before.runs.Load() + f.runs.Load(); runs != 1 {
			t.Errorf("the handlers ran %d times, want once", runs)
		}
	}},
	{"missing header: 400, or no idempotency", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		req := pay("")
		delete(req.headers, "Idempotency-Key")
		wantProblem(t, f.mustCall(req), http.StatusBadRequest, "missing-key")
		f.wantRuns(0)
		if c := f.store.Counts(); c != (idempotencytest.Counts{}) {
			t.Errorf("store calls %+v, want none", c)
		}

		f = newFixture(t, k, nil, httpapi.WithKeyHeader(false))
		for range 2 {
			if resp := f.mustCall(req); resp.status != http.StatusCreated {
				t.Fatalf("optional key: %d %s, want 201", resp.status, resp.body)
			}
		}
		f.wantRuns(2)
		if recs := f.store.Records(); len(recs) != 0 {
			t.Errorf("records %+v without a key", recs)
		}
	}},
	{"ambiguous or malformed header: 400", func(t *testing.T, k kind) {
		type spoiled struct {
			spoil    func(r *httpReq)
			repeated bool // the detail must say the header came more than once
		}
		tests := map[string]spoiled{
			"two spellings": {func(r *httpReq) { r.headers["idempotency-key"] = "k1" }, true},
			"Kelvin sign":   {func(r *httpReq) { r.headers["Idempotency-\u212Aey"] = "k2" }, true},
			"empty":         {func(r *httpReq) { r.headers["Idempotency-Key"] = " " }, false},
			// What an HTTP API or a function URL makes of the header sent
			// twice: reported as repeated, not as a malformed string.
			"comma-joined":              {func(r *httpReq) { r.headers["Idempotency-Key"] = "k1,k2" }, true},
			"comma-joined sf-strings":   {func(r *httpReq) { r.headers["Idempotency-Key"] = `"k1", "k1"` }, true},
			"a comma and no second key": {func(r *httpReq) { r.headers["Idempotency-Key"] = "k1," }, false},
			"parameters":                {func(r *httpReq) { r.headers["Idempotency-Key"] = `"k1";a=1` }, false},
			"unterminated":              {func(r *httpReq) { r.headers["Idempotency-Key"] = `"k1` }, false},
		}
		if k.repeats {
			tests["twice"] = spoiled{func(r *httpReq) {
				delete(r.headers, "Idempotency-Key")
				r.multi = map[string][]string{"Idempotency-Key": {"k1", "k2"}}
			}, true}
			tests["twice, same value"] = spoiled{func(r *httpReq) {
				delete(r.headers, "Idempotency-Key")
				r.multi = map[string][]string{"Idempotency-Key": {"k1", "k1"}}
			}, true}
		}
		for name, tt := range tests {
			t.Run(name, func(t *testing.T) {
				for _, required := range []bool{true, false} {
					f := newFixture(t, k, nil, httpapi.WithKeyHeader(required))
					req := pay("k1")
					tt.spoil(&req)
					resp := f.mustCall(req)
					wantProblem(t, resp, http.StatusBadRequest, "invalid-key")
					// The detail is what the client's developer reads.
					if got := strings.Contains(problemOf(t, resp, http.StatusBadRequest).Detail, "more than once"); got != tt.repeated {
						t.Errorf("the detail says the header came more than once: %v, want %v", got, tt.repeated)
					}
					f.wantRuns(0)
					if c := f.store.Counts(); c != (idempotencytest.Counts{}) {
						t.Errorf("store calls %+v, want none", c)
					}
				}
			})
		}
	}},
	{"store failure before the handler: 503 with Retry-After", func(t *testing.T, k kind) {
		store := &failingAcquire{Store: idempotencytest.NewStore()}
		f := newFixture(t, k, store)
		if retry := wantProblem(t, f.mustCall(pay("k1")), http.StatusServiceUnavailable, "store-unavailable"); retry != "1" {
			t.Errorf("Retry-After %q, want 1", retry)
		}
		f.wantRuns(0)
	}},
	{"store failure after the handler: 503", func(t *testing.T, k kind) {
		store := &unknownCommit{Store: idempotencytest.NewStore()}
		f := newFixture(t, k, store)
		if retry := wantProblem(t, f.mustCall(pay("k1")), http.StatusServiceUnavailable, "store-unavailable"); retry != "1" {
			t.Errorf("Retry-After %q, want 1", retry)
		}
		f.wantRuns(1)
	}},
	{"uncertain: the handler's error, then 409", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		timeout := errors.New("the provider did not answer")
		f.reply = func(int, httpReq) (httpResp, error) { return httpResp{}, idempotency.Uncertain(timeout) }
		if _, err := f.call(pay("k1")); !errors.Is(err, timeout) {
			t.Fatalf("first: %v, want the handler's error", err)
		}
		if retry := wantProblem(t, f.mustCall(pay("k1")), http.StatusConflict, "outcome-uncertain"); retry != "" {
			t.Errorf("Retry-After %q, want none: nobody knows when", retry)
		}
		f.wantRuns(1)
	}},
	{"uncertain, being reconciled: 409 with Retry-After", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil, httpapi.WithOptions(k.reconcile))
		f.mustCall(pay("k1"))
		rec := f.record()
		rec.Status, rec.Response = idempotency.StatusUncertain, nil
		rec.LeaseEnd = time.Now().Add(20 * time.Second)
		f.store.Put(&rec)
		wantSeconds(t, wantProblem(t, f.mustCall(pay("k1")), http.StatusConflict, "outcome-uncertain"), 20)
		f.wantRuns(1)
	}},
	{"abandoned and blocked: 409, no Retry-After", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil, httpapi.WithOptions(idempotency.WithAbandonPolicy(idempotency.AbandonBlock)))
		f.mustCall(pay("k1"))
		rec := f.record()
		rec.Status, rec.Response = idempotency.StatusInProgress, nil
		rec.LeaseEnd, rec.Deadline = rec.Expiry, time.Now().Add(-time.Minute)
		f.store.Put(&rec)
		if retry := wantProblem(t, f.mustCall(pay("k1")), http.StatusConflict, "outcome-uncertain"); retry != "" {
			t.Errorf("Retry-After %q, want none: a person decides", retry)
		}
		f.wantRuns(1)
	}},
	{"response not stored: 409", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		f.mustCall(pay("k1"))
		rec := f.record()
		rec.Response, rec.ResponseOmitted = nil, true
		f.store.Put(&rec)
		wantProblem(t, f.mustCall(pay("k1")), http.StatusConflict, "response-not-stored")
		f.wantRuns(1)
	}},
	{"record unreadable: 500", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		f.mustCall(pay("k1"))
		rec := f.record()
		rec.Status = "GARBLED"
		f.store.Put(&rec)
		wantProblem(t, f.mustCall(pay("k1")), http.StatusInternalServerError, "record-unreadable")
		f.wantRuns(1)
	}},
	{"event with two meanings: 400", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil, httpapi.WithOptions(idempotency.WithPayloadValidation("powertools_json(body).amount")))
		for _, body := range []string{`{"amount":5,"AMOUNT":500}`, `not JSON`} {
			req := pay("k1")
			req.body = body
			wantProblem(t, f.mustCall(req), http.StatusBadRequest, "ambiguous-request")
		}
		f.wantRuns(0)
	}},
	{"handler error: returned unchanged, key released", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil)
		declined := errors.New("card declined")
		f.reply = func(n int, _ httpReq) (httpResp, error) {
			if n == 1 {
				return httpResp{}, declined
			}
			return created(`{"run":2}`), nil
		}
		if _, err := f.call(pay("k1")); err != declined {
			t.Fatalf("first: %v, want the handler's error itself", err)
		}
		if resp := f.mustCall(pay("k1")); resp.status != http.StatusCreated {
			t.Errorf("retry: %d %s, want 201", resp.status, resp.body)
		}
		f.wantRuns(2)
	}},
	{"scope: method, path and client", func(t *testing.T, k kind) {
		f := newFixture(t, k, nil, k.client)
		base := pay("k1")
		f.mustCall(base)
		others := []httpReq{base, base, base}
		others[0].path = "/refunds"
		others[1].method = http.MethodPut
		others[2].client = "mallory"
		for i, req := range others {
			resp := f.mustCall(req)
			if _, n := resp.header("Idempotency-Replayed"); n != 0 || resp.body != fmt.Sprintf(`{"run":%d}`, i+2) {
				t.Errorf("%s %s from %s with the key of %s %s from %s: %s, want a run of its own",
					req.method, req.path, req.client, base.method, base.path, base.client, resp.body)
			}
		}
		if resp := f.mustCall(base); resp.body != `{"run":1}` {
			t.Errorf("the first request again: %s, want its replay", resp.body)
		}
		f.wantRuns(4)
	}},
	{"key from the body, not the header", func(t *testing.T, k kind) {
		h, err := k.wrap(idempotencytest.NewStore(), func(context.Context, httpReq) (httpResp, error) {
			return created(`{}`), nil
		}, append(baseOptions(), httpapi.WithOptions(
			idempotency.WithEventKey("powertools_json(body).order_id"),
			idempotency.WithPayloadValidation("powertools_json(body).amount"),
			idempotency.WithKeyRequired(true),
		))...)
		if err != nil {
			t.Fatal(err)
		}
		call := func(body string) httpResp {
			resp, err := h(context.Background(), httpReq{method: "POST", path: "/orders", body: body, headers: map[string]string{}})
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		call(`{"order_id":"o1","amount":5}`)
		if dup := call(`{"amount":5,"order_id":"o1"}`); dup.status != http.StatusCreated {
			t.Errorf("replay: %d %s", dup.status, dup.body)
		} else if v, _ := dup.header("Idempotency-Replayed"); v != "true" {
			t.Errorf("replay not marked: %+v", dup.headers)
		}
		wantProblem(t, call(`{"order_id":"o1","amount":6}`), http.StatusUnprocessableEntity, "key-reused")
		wantProblem(t, call(`{"amount":5}`), http.StatusBadRequest, "missing-key")
		wantProblem(t, call(`{"order_id":"o1","ORDER_ID":"o2","amount":5}`), http.StatusBadRequest, "ambiguous-request")
	}},
	{"the key header with every decoding option", func(t *testing.T, k kind) {
		// The header's scope is read beside the request, not decoded
		// into it: no option of the middleware's decoding can fail on it.
		for _, opt := range []idempotency.Option{
			idempotency.WithDisallowUnknownFields(true),
			idempotency.WithUseNumber(true),
		} {
			f := newFixture(t, k, nil, httpapi.WithOptions(opt))
			var got []httpReq
			f.reply = func(n int, req httpReq) (httpResp, error) {
				got = append(got, req)
				return created(fmt.Sprintf(`{"run":%d}`, n)), nil
			}
			first := f.mustCall(pay("k1"))
			dup := f.mustCall(pay("k1"))
			if first.status != http.StatusCreated || dup.body != first.body {
				t.Errorf("first %d %s, then %d %s; want the handler's 201, then its replay", first.status, first.body, dup.status, dup.body)
			}
			f.wantRuns(1)
			if len(got) == 1 && (got[0].body != pay("k1").body || got[0].method != http.MethodPost) {
				t.Errorf("the handler got %+v, want the request as sent", got[0])
			}
		}
	}},
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	for _, o := range outcomes {
		for _, k := range kinds {
			t.Run(o.name+"/"+k.name, func(t *testing.T) { o.run(t, k) })
		}
	}
}

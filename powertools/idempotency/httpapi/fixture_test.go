package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/httpapi"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// fixture is one kind's handler, wrapped, on a store.
type fixture struct {
	t     *testing.T
	store *idempotencytest.Store
	runs  atomic.Int32
	// reply is the handler's answer to its n-th run; nil: created.
	reply func(n int, req httpReq) (httpResp, error)
	h     handlerFunc
}

// baseOptions are the options of every fixture, before its own.
func baseOptions() []httpapi.Option {
	return []httpapi.Option{httpapi.WithOptions(idempotency.WithKeyPrefix("test"), idempotency.WithLogger(slog.New(slog.DiscardHandler)))}
}

// newFixture wraps a handler for k on store (nil: a new in-memory one),
// keyed on a required header unless opts say otherwise.
func newFixture(t *testing.T, k kind, store idempotency.Store, opts ...httpapi.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, store: idempotencytest.NewStore()}
	if store == nil {
		store = f.store
	}
	handler := func(ctx context.Context, req httpReq) (httpResp, error) {
		n := int(f.runs.Add(1))
		if f.reply != nil {
			return f.reply(n, req)
		}
		return created(fmt.Sprintf(`{"run":%d}`, n)), nil
	}
	opts = append(append(baseOptions(), httpapi.WithKeyHeader(true)), opts...)
	h, err := k.wrap(store, handler, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.h = h
	return f
}

// call invokes the handler as Lambda does, with a 30 s deadline.
func (f *fixture) call(req httpReq) (httpResp, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.h(ctx, req)
}

// mustCall is call for a request that must get an HTTP answer.
func (f *fixture) mustCall(req httpReq) httpResp {
	f.t.Helper()
	resp, err := f.call(req)
	if err != nil {
		f.t.Fatalf("handler error %v, want an HTTP response", err)
	}
	return resp
}

func (f *fixture) wantRuns(want int) {
	f.t.Helper()
	if got := int(f.runs.Load()); got != want {
		f.t.Errorf("the handler ran %d times, want %d", got, want)
	}
}

// record returns the only stored record.
func (f *fixture) record() idempotency.Record {
	f.t.Helper()
	recs := f.store.Records()
	if len(recs) != 1 {
		f.t.Fatalf("records %+v, want one", recs)
	}
	return recs[0]
}

// pay is a request with the key in its Idempotency-Key header.
func pay(key string) httpReq {
	return httpReq{
		method: http.MethodPost, path: "/payments", body: `{"amount":5}`, client: "alice",
		headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": key},
	}
}

// problemDoc is an RFC 9457 document, as a client reads it.
type problemDoc struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// wantProblem checks that resp is the problem code with status, of the
// default type about:blank, and returns its Retry-After ("" when there is
// none).
func wantProblem(t *testing.T, resp httpResp, status int, code string) string {
	t.Helper()
	p := problemOf(t, resp, status)
	title := http.StatusText(status)
	if status == http.StatusUnprocessableEntity {
		title = "Unprocessable Content" // RFC 9110's name, not Go's
	}
	if p.Type != "about:blank" || p.Title != title || p.Code != code {
		t.Errorf("problem %+v, want type about:blank, title %q and code %s", p, title, code)
	}
	retry, _ := resp.header("Retry-After")
	return retry
}

// problemOf returns the problem document resp carries, after checking
// that it has status, a detail, and what every problem has.
func problemOf(t *testing.T, resp httpResp, status int) problemDoc {
	t.Helper()
	if resp.status != status {
		t.Fatalf("status %d, want %d; body %s", resp.status, status, resp.body)
	}
	if ct, n := resp.header("Content-Type"); ct != "application/problem+json" || n != 1 {
		t.Errorf("Content-Type %q (%d values), want application/problem+json", ct, n)
	}
	var p problemDoc
	if err := json.Unmarshal([]byte(resp.body), &p); err != nil {
		t.Fatalf("body %s: %v", resp.body, err)
	}
	if p.Status != status || p.Title == "" || p.Detail == "" || p.Code == "" {
		t.Errorf("problem %+v, want status %d, with a title, a detail and a code", p, status)
	}
	if resp.description != "" && resp.description != strconv.Itoa(status)+" "+http.StatusText(status) {
		t.Errorf("ALB statusDescription %q", resp.description)
	}
	return p
}

// failingAcquire is a store whose Acquire fails, as DynamoDB does when it
// throttles past the SDK's retries.
type failingAcquire struct{ *idempotencytest.Store }

func (s *failingAcquire) Acquire(context.Context, *idempotency.Record, time.Time) (*idempotency.Record, error) {
	return nil, errors.New("ThrottlingException: rate of requests exceeds the allowed throughput")
}

// unknownCommit is a store that commits staged writes with the record and
// cannot tell whether it did.
type unknownCommit struct{ *idempotencytest.Store }

func (s *unknownCommit) StageWrites(ctx context.Context) context.Context { return ctx }

func (s *unknownCommit) Complete(_ context.Context, rec *idempotency.Record) error {
	return &idempotency.CommitError{Key: rec.Key, State: idempotency.CommitUnknown, Err: errors.New("connection reset")}
}

// wantSeconds checks that retry, a Retry-After, is the seconds left of a
// lease that had want seconds to run when the test set it: want, or a
// little less on a slow machine.
func wantSeconds(t *testing.T, retry string, want int) {
	t.Helper()
	if n, err := strconv.Atoi(retry); err != nil || n > want || n < want-5 {
		t.Errorf("Retry-After %q, want %d (or a little less)", retry, want)
	}
}

package responsestore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// Faults of S3 and KMS between the SDK (its standard retryer: three
// attempts) and moto, injected by internal/testing/faultproxy: a 500, a connection
// reset before the server, and a reply lost after the server applied the
// request. Throttling is KMS's ThrottlingException from faultproxy, and
// S3's 503 SlowDown from slowDown below: faultproxy's throttling reply is
// DynamoDB's JSON, which S3's client reads as a 400 BadRequest that it does
// not retry. DynamoDB is reached directly. Every response is encrypted
// with a data key of its own and offloaded, and every replay decrypts its
// key, so that each request below happens on each call.

// faultStep is the request a fault hits.
type faultStep struct {
	name   string
	kms    bool   // on KMS, else on S3
	op     string // KMS operation; S3's requests carry no X-Amz-Target
	replay bool   // the fault hits the duplicate, not the first call
}

var faultSteps = []faultStep{
	{name: "PutObject"},
	{name: "GetObject", replay: true},
	{name: "GenerateDataKey", kms: true, op: "GenerateDataKey"},
	{name: "Decrypt", kms: true, op: "Decrypt", replay: true},
}

var faultKinds = []faultproxy.Fault{faultproxy.Throttling, faultproxy.InternalServerError, faultproxy.ResetBeforeServer, faultproxy.ReplyLost}

type faultWorld struct {
	*moto
	s3p, kmsp *faultproxy.Proxy
	slow      *slowDown
	h         *idempotency.Handler
	effects   atomic.Int32
}

func newFaultWorld(t *testing.T) *faultWorld {
	w := &faultWorld{moto: newMoto(t), slow: &slowDown{next: http.DefaultTransport}}
	var err error
	if w.s3p, err = faultproxy.NewHTTP(w.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.s3p.Close)
	if w.kmsp, err = faultproxy.NewHTTP(w.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.kmsp.Close)
	s3c := newS3(w.s3p.URL(), nil, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: w.slow} })
	store := mustNew(t, w.dynamoStore(t, nil),
		responsestore.WithKMS(newKMS(w.kmsp.URL(), nil), w.keyID), responsestore.WithFunctionName("orders"),
		responsestore.WithDataKeyCache(0, 1),
		responsestore.WithS3(s3c, w.bucket), responsestore.WithOffloadThreshold(0))
	w.h = idempotency.Wrap(store, func(ctx context.Context, in struct{ ID string }) (string, error) {
		w.effects.Add(1)
		return "charged " + in.ID, nil
	}, idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("orders"), idempotency.WithLease(time.Minute))
	// The first invocation, as after a cold start, runs the store's check
	// of KMS and S3: the faults are the later invocations'.
	if _, err := w.h.Invoke(t.Context(), []byte(`{"ID":"cold start"}`)); err != nil {
		t.Fatal(err)
	}
	w.effects.Store(0)
	return w
}

// inject breaks the next times requests of step with fault; times 0
// breaks every one.
func (w *faultWorld) inject(step faultStep, fault faultproxy.Fault, times int) {
	switch {
	case step.kms:
		w.kmsp.Set(faultproxy.Rule{Fault: fault, Op: step.op, Times: times})
	case fault == faultproxy.Throttling:
		if times == 0 {
			times = 1 << 30
		}
		w.slow.left.Store(int32(times))
	default:
		w.s3p.Set(faultproxy.Rule{Fault: fault, Times: times})
	}
}

// clear turns the faults off and returns how many were injected.
func (w *faultWorld) clear() int {
	w.kmsp.Set()
	w.s3p.Set()
	w.slow.left.Store(0)
	injected := 0
	for _, p := range []*faultproxy.Proxy{w.kmsp, w.s3p} {
		for _, v := range p.Counts().Injected {
			injected += v
		}
		p.ResetCounts()
	}
	return injected + int(w.slow.injected.Swap(0))
}

func (w *faultWorld) invoke(id string) (string, error) {
	out, err := w.h.Invoke(context.Background(), fmt.Appendf(nil, `{"ID":%q}`, id))
	return string(out), err
}

// slowDown answers the next left requests with S3's throttling reply, 503
// SlowDown, instead of sending them.
type slowDown struct {
	next     http.RoundTripper
	left     atomic.Int32
	injected atomic.Int32
}

func (s *slowDown) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.left.Add(-1) < 0 {
		s.left.Store(0)
		return s.next.RoundTrip(r)
	}
	s.injected.Add(1)
	if r.Body != nil {
		io.Copy(io.Discard, r.Body) //nolint:errcheck // the request is dropped
		r.Body.Close()
	}
	const body = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>SLOWDOWN</RequestId><HostId>test</HostId></Error>`
	return &http.Response{
		StatusCode: http.StatusServiceUnavailable, Status: "503 Slow Down", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/xml"}, "X-Amz-Request-Id": {"SLOWDOWN"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: r,
	}, nil
}

// The SDK retries each fault, once and twice, and the invocation carries
// on: the handler runs once, and the replay is its response.
func TestFaultsRetried(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t)
	for _, step := range faultSteps {
		for _, fault := range faultKinds {
			for _, times := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%v/x%d", step.name, fault, times), func(t *testing.T) {
					defer w.clear()
					id := t.Name()
					before := w.effects.Load()
					if !step.replay {
						w.inject(step, fault, times)
					}
					out, err := w.invoke(id)
					if err != nil || out != fmt.Sprintf("%q", "charged "+id) {
						t.Fatalf("first call = %s, %v", out, err)
					}
					if step.replay {
						w.inject(step, fault, times)
					}
					again, err := w.invoke(id)
					if err != nil || again != out {
						t.Fatalf("replay = %s, %v; want %s", again, err, out)
					}
					if n := w.clear(); n != times {
						t.Fatalf("%d faults injected, want %d", n, times)
					}
					if n := w.effects.Load() - before; n != 1 {
						t.Fatalf("handler ran %d times, want 1", n)
					}
				})
			}
		}
	}
}

// A fault on every attempt. On the first call the response is not stored:
// the record is completed without it, duplicates get
// ResponseNotStoredError, and the handler does not run again. On a replay
// the duplicate gets a PersistenceError without running the handler, and
// a later one, once the fault has passed, gets the response.
func TestFaultsPersist(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t)
	for _, step := range faultSteps {
		for _, fault := range faultKinds {
			t.Run(fmt.Sprintf("%s/%v", step.name, fault), func(t *testing.T) {
				defer w.clear()
				id := t.Name()
				before := w.effects.Load()
				if !step.replay {
					w.inject(step, fault, 0)
					out, err := w.invoke(id)
					if w.clear() == 0 {
						t.Fatal("no fault was injected")
					}
					if err != nil || out != fmt.Sprintf("%q", "charged "+id) {
						t.Fatalf("first call = %s, %v; want the handler's response", out, err)
					}
					_, err = w.invoke(id)
					if _, ok := errors.AsType[*idempotency.ResponseNotStoredError](err); !ok {
						t.Fatalf("duplicate = %v, want ResponseNotStoredError", err)
					}
				} else {
					out, err := w.invoke(id)
					if err != nil {
						t.Fatal(err)
					}
					w.inject(step, fault, 0)
					_, err = w.invoke(id)
					if w.clear() == 0 {
						t.Fatal("no fault was injected")
					}
					if _, ok := errors.AsType[*idempotency.PersistenceError](err); !ok {
						t.Fatalf("duplicate during the fault = %v, want PersistenceError", err)
					}
					if again, err := w.invoke(id); err != nil || again != out {
						t.Fatalf("duplicate after the fault = %s, %v; want %s", again, err, out)
					}
				}
				if n := w.effects.Load() - before; n != 1 {
					t.Fatalf("handler ran %d times, want 1", n)
				}
			})
		}
	}
}

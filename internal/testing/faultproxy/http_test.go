package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// backend is a stand-in DynamoDB that answers every request with an empty
// JSON object and counts what reached it.
func backend(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		io.WriteString(w, "{}")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func newProxy(t *testing.T, target string, opts ...faultproxy.Option) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.NewHTTP(target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// client is an SDK client through p whose retryer waits a millisecond
// between attempts instead of up to seconds.
func client(p *faultproxy.Proxy, maxAttempts int) *dynamodb.Client {
	return testenv.NewDynamoDB(p.URL(), func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = maxAttempts
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		})
	})
}

func getItem(ctx context.Context, c *dynamodb.Client) error {
	_, err := c.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String("t"),
		Key:       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}},
	})
	return err
}

// Each fault, injected once, is one the SDK's standard retryer retries:
// the second attempt goes through. The requests that reach the server are
// the faults that let them (latency, reply lost) plus the retry.
func TestSDKRetriesEachFault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault       faultproxy.Fault
		wantReached int32
	}{
		{faultproxy.Throttling, 1},
		{faultproxy.ProvisionedThroughputExceeded, 1},
		{faultproxy.InternalServerError, 1},
		{faultproxy.ResetBeforeServer, 1},
		{faultproxy.ReplyLost, 2},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			srv, reached := backend(t)
			p := newProxy(t, srv.URL)
			p.Set(faultproxy.Rule{Fault: tt.fault, Op: "GetItem", Times: 1})
			if err := getItem(t.Context(), client(p, 3)); err != nil {
				t.Fatalf("GetItem after one %v: %v", tt.fault, err)
			}
			c := p.Counts()
			if c.Requests["GetItem"] != 2 || c.Injected[faultproxy.Injection{Op: "GetItem", Fault: tt.fault}] != 1 {
				t.Errorf("counts = %+v, want 2 GetItem requests, 1 %v injected", c, tt.fault)
			}
			if got := reached.Load(); got != tt.wantReached {
				t.Errorf("the server got %d requests, want %d", got, tt.wantReached)
			}
		})
	}
}

// The error replies are DynamoDB's: the SDK reports the service's error
// codes, and with retries off the throttling ones come back as such.
func TestErrorReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault faultproxy.Fault
		code  string
	}{
		{faultproxy.Throttling, "ThrottlingException"},
		{faultproxy.ProvisionedThroughputExceeded, "ProvisionedThroughputExceededException"},
		{faultproxy.InternalServerError, "InternalServerError"},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			srv, _ := backend(t)
			p := newProxy(t, srv.URL)
			p.Set(faultproxy.Rule{Fault: tt.fault})
			err := getItem(t.Context(), client(p, 1))
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tt.code {
				t.Fatalf("err = %v, want API error %s", err, tt.code)
			}
			if tt.fault == faultproxy.ProvisionedThroughputExceeded {
				var pte *types.ProvisionedThroughputExceededException
				if !errors.As(err, &pte) {
					t.Errorf("err = %T, want *types.ProvisionedThroughputExceededException", err)
				}
			}
			if tt.fault == faultproxy.InternalServerError {
				var ise *types.InternalServerError
				if !errors.As(err, &ise) {
					t.Errorf("err = %T, want *types.InternalServerError", err)
				}
			}
		})
	}
}

// Latency holds the request for the delay, then forwards it.
func TestLatency(t *testing.T) {
	t.Parallel()
	srv, reached := backend(t)
	p := newProxy(t, srv.URL)
	p.Set(faultproxy.Rule{Fault: faultproxy.Latency, Delay: 50 * time.Millisecond})
	start := time.Now()
	if err := getItem(t.Context(), client(p, 1)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("GetItem took %v, want at least the 50ms delay", d)
	}
	if reached.Load() != 1 {
		t.Errorf("the server got %d requests, want 1", reached.Load())
	}
}

// Rules select by operation, body, skip, count and rate; the first rule
// that fires wins.
func TestSelection(t *testing.T) {
	t.Parallel()
	srv, _ := backend(t)
	p := newProxy(t, srv.URL, faultproxy.WithSeed(7))
	c := client(p, 1)
	p.Set(
		faultproxy.Rule{Fault: faultproxy.InternalServerError, Op: "PutItem"},
		faultproxy.Rule{Fault: faultproxy.Throttling, Op: "GetItem", BodyContains: `"S":"k"`, Skip: 1, Times: 2},
	)
	var got []bool
	for range 5 {
		got = append(got, getItem(t.Context(), c) != nil)
	}
	if want := []bool{false, true, true, false, false}; !equal(got, want) {
		t.Errorf("failed GetItems = %v, want %v", got, want)
	}
	p.Set(faultproxy.Rule{Fault: faultproxy.Throttling, Rate: 0.25})
	p.ResetCounts()
	failed := 0
	for range 400 {
		if getItem(t.Context(), c) != nil {
			failed++
		}
	}
	if failed < 60 || failed > 140 {
		t.Errorf("%d of 400 failed at rate 0.25", failed)
	}
	if n := p.Counts().InjectedFault(faultproxy.Throttling); n != failed {
		t.Errorf("counted %d throttles, the client saw %d", n, failed)
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Then runs after the server has applied a ReplyLost request, before the
// client hears anything.
func TestThen(t *testing.T) {
	t.Parallel()
	srv, reached := backend(t)
	p := newProxy(t, srv.URL)
	var atThen atomic.Int32 // the reset reaches the client through the kernel, which the race detector cannot see
	atThen.Store(-1)
	p.Set(faultproxy.Rule{Fault: faultproxy.ReplyLost, Times: 1, Then: func() { atThen.Store(reached.Load()) }})
	if err := getItem(t.Context(), client(p, 1)); err == nil {
		t.Fatal("GetItem succeeded, want the connection reset")
	}
	if n := atThen.Load(); n != 1 {
		t.Errorf("Then ran when the server had %d requests, want 1", n)
	}
}

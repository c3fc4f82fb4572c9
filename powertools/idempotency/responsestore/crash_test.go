package responsestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// Crash points, on moto (DynamoDB, S3, KMS): the invocation's goroutine
// ends with runtime.Goexit right after the request that marks the point
// has been applied, so that nothing of the invocation runs after it, as
// when Lambda's process dies there. The middleware's own deferred release
// does not run either: a handler that has returned is past it.

// crashS3 ends the calling goroutine after a PutObject succeeds, while
// armed.
type crashS3 struct {
	responsestore.S3Client
	armed atomic.Bool
}

func (c *crashS3) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	out, err := c.S3Client.PutObject(ctx, in, optFns...)
	if err == nil && c.armed.CompareAndSwap(true, false) {
		runtime.Goexit()
	}
	return out, err
}

// crashStore ends the calling goroutine after a Complete succeeds, while
// armed.
type crashStore struct {
	idempotency.Store
	armed atomic.Bool
}

func (c *crashStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	err := c.Store.Complete(ctx, rec)
	if err == nil && c.armed.CompareAndSwap(true, false) {
		runtime.Goexit()
	}
	return err
}

// crashWorld is the middleware over the wrapped DynamoDB store, with a
// clock the test moves and a handler that counts its effects.
type crashWorld struct {
	*moto
	inner   *crashStore
	s3crash *crashS3
	h       *idempotency.Handler
	clock   *fake.Clock
	effects atomic.Int32
}

const crashLease = 30 * time.Second

func newCrashWorld(t *testing.T) *crashWorld {
	w := &crashWorld{moto: newMoto(t), clock: fake.NewClock(time.Now())}
	w.inner = &crashStore{Store: w.dynamoStore(t, nil)}
	w.s3crash = &crashS3{S3Client: w.moto.s3}
	store := mustNew(t, w.inner,
		responsestore.WithKMS(w.kms, w.keyID), responsestore.WithFunctionName("orders"),
		responsestore.WithS3(w.s3crash, w.bucket), responsestore.WithOffloadThreshold(0))
	w.h = idempotency.Wrap(store, func(ctx context.Context, in struct{ ID string }) (string, error) {
		n := w.effects.Add(1)
		return fmt.Sprintf("charged %s, effect %d", in.ID, n), nil
	}, idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("orders"),
		idempotency.WithLease(crashLease), idempotency.WithClock(w.clock.Now))
	return w
}

// invoke calls the handler on its own goroutine, which a crash ends, and
// reports whether the call returned.
func (w *crashWorld) invoke(event string) (out string, returned bool, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b []byte
		b, err = w.h.Invoke(context.Background(), []byte(event))
		out, returned = string(b), true
	}()
	<-done
	return out, returned, err
}

// Object written, COMPLETE never written: the object is an orphan, the
// record stays IN_PROGRESS, duplicates get InProgressError until the lease
// ends, and the next one runs the handler again: two effects, exactly as
// when a process dies between its handler's return and the COMPLETE write
// without responsestore. The second run's response is the one replayed
// from then on.
func TestCrashAfterObjectBeforeComplete(t *testing.T) {
	t.Parallel()
	w := newCrashWorld(t)
	event := `{"ID":"o-1"}`
	w.s3crash.armed.Store(true)
	if _, returned, _ := w.invoke(event); returned {
		t.Fatal("the invocation returned; want it to die after the object was written")
	}
	key, _, _ := w.h.KeyOf([]byte(event))
	first := mustGet(t, w.inner.Store, key)
	if first.Status != idempotency.StatusInProgress {
		t.Fatalf("record %+v, want it IN_PROGRESS", first)
	}
	objects := w.objects(t)
	if len(objects) != 1 || !strings.Contains(objects[0], "/"+first.LeaseToken+"/") {
		t.Fatalf("objects %q, want one, under the dead invocation's lease token %s", objects, first.LeaseToken)
	}

	// Before the lease ends: InProgressError, and no run.
	w.clock.Advance(crashLease - time.Second)
	if _, _, err := w.invoke(event); !isInProgress(err) {
		t.Fatalf("duplicate during the lease: %v, want InProgressError", err)
	}
	// After it: the handler runs again.
	w.clock.Advance(time.Second)
	out, _, err := w.invoke(event)
	if err != nil || out != `"charged o-1, effect 2"` {
		t.Fatalf("duplicate after the lease = %s, %v; want the second run's response", out, err)
	}
	if n := w.effects.Load(); n != 2 {
		t.Fatalf("%d effects, want 2", n)
	}
	second := mustGet(t, w.inner.Store, key)
	if second.Status != idempotency.StatusComplete || second.LeaseToken == first.LeaseToken {
		t.Fatalf("record %+v, want it COMPLETE under the new token", second)
	}
	objects = w.objects(t)
	if len(objects) != 2 {
		t.Fatalf("objects %q, want the orphan and the second run's", objects)
	}
	// The replay reads the second run's object; the orphan is read by no one.
	w.clock.Advance(time.Second)
	again, _, err := w.invoke(event)
	if err != nil || again != out {
		t.Fatalf("replay = %s, %v; want %s", again, err, out)
	}
	if n := w.effects.Load(); n != 2 {
		t.Fatalf("%d effects after the replay, want 2", n)
	}
}

// COMPLETE written, the process dies before answering: the caller's retry
// is a replay of the stored response, byte for byte, and the handler does
// not run again.
func TestCrashAfterComplete(t *testing.T) {
	t.Parallel()
	w := newCrashWorld(t)
	event := `{"ID":"o-2"}`
	w.inner.armed.Store(true)
	if _, returned, _ := w.invoke(event); returned {
		t.Fatal("the invocation returned; want it to die after COMPLETE")
	}
	w.clock.Advance(time.Second)
	out, _, err := w.invoke(event)
	if err != nil || out != `"charged o-2, effect 1"` {
		t.Fatalf("retry = %s, %v; want the first run's response", out, err)
	}
	if n := w.effects.Load(); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
	if objects := w.objects(t); len(objects) != 1 {
		t.Fatalf("objects %q, want one", objects)
	}
	rec := mustGet(t, w.inner.Store, mustKey(t, w.h, event))
	if bytes.Contains(rec.Response, []byte("charged")) {
		t.Fatal("the record holds the response in the clear")
	}
}

func mustKey(t *testing.T, h *idempotency.Handler, event string) string {
	t.Helper()
	key, _, err := h.KeyOf([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func isInProgress(err error) bool {
	_, ok := errors.AsType[*idempotency.InProgressError](err)
	return ok
}

package responsestore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// A response that cannot be encrypted or offloaded is not stored, in the
// clear or at all: the record is completed without it, the handler's
// effect is not run again, and duplicates get ResponseNotStoredError,
// which says why (not "too large", for a 2 KB response).
func TestResponseNotStoredWhenSealFails(t *testing.T) {
	t.Parallel()
	large := string(jsonOf(2000, true))
	tests := []struct {
		name   string
		op     string
		reason string
		opts   func(s3 *memS3, k *memKMS) []responsestore.Option
		fail   func(s3 *memS3, k *memKMS)
	}{
		{"kms", "encrypt", "could not be encrypted", func(_ *memS3, k *memKMS) []responsestore.Option {
			// A data key per response, so that the response asks KMS for
			// one, not use New's.
			return []responsestore.Option{responsestore.WithKMS(k, "key-1"), responsestore.WithFunctionName("fn"), responsestore.WithDataKeyCache(0, 1)}
		}, func(_ *memS3, k *memKMS) { k.setFail(errUnavailable) }},
		{"s3", "offload", "could not be offloaded to S3", func(s3 *memS3, _ *memKMS) []responsestore.Option {
			return []responsestore.Option{responsestore.WithS3(s3, "b"), responsestore.WithOffloadThreshold(1000)}
		}, func(s3 *memS3, _ *memKMS) { s3.failPut = errUnavailable }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s3, k := newMemS3(), newMemKMS("key-1")
			inner := idempotencytest.NewStore()
			logs := &fake.Log{}
			store := mustNew(t, inner, append(tc.opts(s3, k), responsestore.WithLogger(slog.New(logs)))...)
			runs := 0
			h := idempotency.Wrap(store, func(context.Context, struct{ ID string }) (string, error) {
				runs++
				return large, nil
			}, idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("fn"))
			// The first invocation, whose check of the store passes: the
			// service fails later.
			if _, err := h.Invoke(t.Context(), []byte(`{"ID":"0"}`)); err != nil {
				t.Fatal(err)
			}
			runs = 0
			tc.fail(s3, k)
			out, err := h.Invoke(t.Context(), []byte(`{"ID":"1"}`))
			if err != nil || len(out) < len(large) {
				t.Fatalf("first call = %d bytes, %v; want the handler's response", len(out), err)
			}
			_, err = h.Invoke(t.Context(), []byte(`{"ID":"1"}`))
			if e, ok := errors.AsType[*idempotency.ResponseNotStoredError](err); !ok || e.Reason != tc.reason {
				t.Fatalf("duplicate error = %v, want ResponseNotStoredError with the reason %q", err, tc.reason)
			}
			if runs != 1 {
				t.Fatalf("handler ran %d times, want 1", runs)
			}
			key, _, err := h.KeyOf([]byte(`{"ID":"1"}`))
			if err != nil {
				t.Fatal(err)
			}
			stored, err := inner.Get(t.Context(), key)
			if err != nil || !stored.ResponseOmitted || len(stored.Response) != 0 || stored.ResponseOmittedReason != tc.reason {
				t.Fatalf("stored %+v, %v; want the record without its response", stored, err)
			}
			logged := logs.At(slog.LevelError)
			if len(logged) != 1 {
				t.Fatalf("logged %v, want the one cause", logged)
			}
			if cause, _ := logged[0].Attrs["error"].Any().(error); !errors.Is(cause, errUnavailable) {
				t.Fatalf("logged %v, want the one cause", logged)
			}

			// Complete's error matches ErrUnstorableResponse and the cause.
			rec := *stored
			rec.Response, rec.ResponseOmitted = []byte(large), false
			err = store.Complete(t.Context(), &rec)
			e, ok := errors.AsType[*responsestore.ResponseError](err)
			if !ok || e.Op != tc.op || !errors.Is(err, idempotency.ErrUnstorableResponse) || errors.Is(err, idempotency.ErrRecordTooLarge) || !errors.Is(err, errUnavailable) {
				t.Fatalf("Complete error = %v, want a ResponseError (%s) matching ErrUnstorableResponse and the cause, not ErrRecordTooLarge", err, tc.op)
			}
			if got, err := inner.Get(t.Context(), key); err != nil || !bytes.Equal(got.Response, stored.Response) || got.ResponseOmitted != stored.ResponseOmitted {
				t.Fatalf("after a failed Complete the store holds %+v, %v; want %+v", got, err, stored)
			}
		})
	}
}

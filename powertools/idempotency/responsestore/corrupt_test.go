package responsestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// corruptWorld is a record written by one store, changed in the inner
// store or in S3, and read back by another.
type corruptWorld struct {
	inner *idempotencytest.Store
	s3    *memS3
	kms   *memKMS
	key   string
}

func (w *corruptWorld) storedRecord(t *testing.T) *idempotency.Record {
	t.Helper()
	rec, err := w.inner.Get(context.Background(), w.key)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// setResponse replaces the response the inner store keeps.
func (w *corruptWorld) setResponse(t *testing.T, change func([]byte) []byte) {
	t.Helper()
	rec := w.storedRecord(t)
	rec.Response = change(bytes.Clone(rec.Response))
	w.inner.Put(rec)
}

// flip changes one bit of b at i (from the end when negative).
func flip(i int) func([]byte) []byte {
	return func(b []byte) []byte {
		if i < 0 {
			i += len(b)
		}
		b[i] ^= 0x01
		return b
	}
}

// Every way a stored response can fail to read back gives a
// CorruptedRecordError, from Get and from Acquire, and the middleware does
// not run the handler; a failure to reach S3 or KMS is not corruption.
func TestCorrupted(t *testing.T) {
	t.Parallel()
	aeadKey := randomKey()
	large := jsonOf(2000, false)
	tests := []struct {
		name    string
		write   func(w *corruptWorld) []responsestore.Option // the writer's options
		read    func(w *corruptWorld) []responsestore.Option // the reader's; nil: the writer's
		resp    []byte
		change  func(t *testing.T, w *corruptWorld)
		fail    func(w *corruptWorld) // after the reader is made
		corrupt bool                  // false: an error that may pass, not corruption
	}{
		{name: "version", resp: large, write: gzipOpts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { b[4] = 2; return b })
		}, corrupt: true},
		{name: "unknown-flag", resp: large, write: gzipOpts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { b[5] |= 0x80; return b })
		}, corrupt: true},
		{name: "kms-and-aead", resp: large, write: gzipOpts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { b[5] |= 0x06; return b })
		}, corrupt: true},
		{name: "truncated-header", resp: large, write: gzipOpts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { return b[:5] })
		}, corrupt: true},
		{name: "gzip-truncated", resp: large, write: gzipOpts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { return b[:len(b)-3] })
		}, corrupt: true},
		{name: "gzip-checksum", resp: large, write: gzipOpts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, flip(-6))
		}, corrupt: true},
		{name: "gzip-trailing-bytes", resp: large, write: gzipOpts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { return append(b, 0) })
		}, corrupt: true},
		{name: "size-differs", resp: []byte(`"plain"`), write: noOpts, change: func(t *testing.T, w *corruptWorld) {
			// An envelope with no flag whose size is not its body's.
			w.setResponse(t, func([]byte) []byte { return []byte{0x89, 'I', 'D', 'R', 1, 0, 3, 'a', 'b'} })
		}, corrupt: true},
		{name: "object-missing", resp: large, write: s3Opts, change: func(t *testing.T, w *corruptWorld) {
			name, _ := w.s3.only()
			w.s3.set(name, nil)
		}, corrupt: true},
		{name: "object-changed", resp: large, write: s3Opts, change: func(t *testing.T, w *corruptWorld) {
			name, body := w.s3.only()
			w.s3.set(name, flip(10)(body))
		}, corrupt: true},
		{name: "object-longer", resp: large, write: s3Opts, change: func(t *testing.T, w *corruptWorld) {
			name, body := w.s3.only()
			w.s3.set(name, append(body, ' '))
		}, corrupt: true},
		{name: "object-trailing-field", resp: large, write: s3Opts, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { return append(b, 0) })
		}, corrupt: true},
		{name: "no-s3-to-read", resp: large, write: s3Opts, read: noOpts, corrupt: true},
		{name: "aead-ciphertext-changed", resp: large, write: aeadOpts(aeadKey, "fn"), change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, flip(-1))
		}, corrupt: true},
		{name: "aead-gzip-flag-cleared", resp: large, write: func(w *corruptWorld) []responsestore.Option {
			return append(aeadOpts(aeadKey, "fn")(w), responsestore.WithCompression(0))
		}, change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, func(b []byte) []byte { b[5] &^= 0x01; return b })
		}, corrupt: true},
		{name: "aead-other-key", resp: large, write: aeadOpts(aeadKey, "fn"), read: aeadOpts(randomKey(), "fn"), corrupt: true},
		{name: "aead-other-function", resp: large, write: aeadOpts(aeadKey, "fn"), read: aeadOpts(aeadKey, "other-fn"), corrupt: true},
		{name: "aead-moved", resp: large, write: aeadOpts(aeadKey, "fn"), change: moveTo("other-key"), corrupt: true},
		{name: "aead-read-as-kms", resp: large, write: aeadOpts(aeadKey, "fn"), read: kmsOpts("key-1"), corrupt: true},
		{name: "encrypted-read-in-clear", resp: large, write: aeadOpts(aeadKey, "fn"), read: noOpts, corrupt: true},
		{name: "kms-moved", resp: large, write: kmsOpts("key-1"), change: moveTo("other-key"), corrupt: true},
		{name: "kms-data-key-changed", resp: []byte(`{"ok":1}`), write: kmsOpts("key-1"), change: func(t *testing.T, w *corruptWorld) {
			w.setResponse(t, flip(12)) // inside the encrypted data key
		}, corrupt: true},
		{name: "kms-other-key-id", resp: large, write: kmsOpts("key-1"), read: func(*corruptWorld) []responsestore.Option {
			return []responsestore.Option{responsestore.WithKMS(newMemKMS("key-2"), "key-2"), responsestore.WithFunctionName("fn")}
		}, corrupt: true},
		{name: "kms-unreachable", resp: large, write: kmsOpts("key-1"), fail: func(w *corruptWorld) {
			w.kms.setFail(errUnavailable)
		}, corrupt: false},
		{name: "s3-unreachable", resp: large, write: s3Opts, fail: func(w *corruptWorld) {
			w.s3.failGet = errUnavailable
		}, corrupt: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &corruptWorld{inner: idempotencytest.NewStore(), s3: newMemS3(), key: "orders#k"}
			w.kms = newMemKMS("key-1")
			completeOne(t, mustNew(t, w.inner, tc.write(w)...), w.key, tc.resp)
			if tc.change != nil {
				tc.change(t, w)
			}
			opts := tc.write(w)
			if tc.read != nil {
				opts = tc.read(w)
			}
			reader := mustNew(t, w.inner, opts...)
			if tc.fail != nil {
				tc.fail(w)
			}
			_, err := reader.Get(context.Background(), w.key)
			wantCorrupted(t, "Get", err, tc.corrupt)
			_, err = reader.Acquire(context.Background(), &idempotency.Record{Key: w.key, Status: idempotency.StatusInProgress, LeaseToken: "new", Expiry: time.Now().Add(time.Hour), LeaseEnd: time.Now().Add(time.Minute)}, time.Now())
			wantCorrupted(t, "Acquire", err, tc.corrupt)
		})
	}
}

func wantCorrupted(t *testing.T, what string, err error, corrupt bool) {
	t.Helper()
	t.Logf("%s: %v", what, err)
	_, isCorrupt := errors.AsType[*idempotency.CorruptedRecordError](err)
	switch {
	case err == nil:
		t.Fatalf("%s: no error, want one", what)
	case corrupt && !isCorrupt:
		t.Fatalf("%s error = %v, want a CorruptedRecordError", what, err)
	case !corrupt && isCorrupt:
		t.Fatalf("%s error = %v, want a failure that may pass, not a CorruptedRecordError", what, err)
	case !corrupt && !errors.Is(err, errUnavailable):
		t.Fatalf("%s error = %v, want it to wrap the service's error", what, err)
	}
}

func noOpts(*corruptWorld) []responsestore.Option { return nil }

func gzipOpts(*corruptWorld) []responsestore.Option {
	return []responsestore.Option{responsestore.WithCompression(0)}
}

func s3Opts(w *corruptWorld) []responsestore.Option {
	return []responsestore.Option{responsestore.WithS3(w.s3, "bucket"), responsestore.WithOffloadThreshold(0)}
}

func aeadOpts(key []byte, function string) func(*corruptWorld) []responsestore.Option {
	return func(*corruptWorld) []responsestore.Option {
		return []responsestore.Option{responsestore.WithAEAD(newGCM(key)), responsestore.WithFunctionName(function)}
	}
}

func kmsOpts(keyID string) func(*corruptWorld) []responsestore.Option {
	return func(w *corruptWorld) []responsestore.Option {
		return []responsestore.Option{responsestore.WithKMS(w.kms, keyID), responsestore.WithFunctionName("fn")}
	}
}

// moveTo copies the stored record to the key other, with its ciphertext,
// and makes other the key the test reads.
func moveTo(other string) func(t *testing.T, w *corruptWorld) {
	return func(t *testing.T, w *corruptWorld) {
		rec := w.storedRecord(t)
		rec.Key = other
		w.inner.Put(rec)
		w.key = other
	}
}

// Through the middleware: a duplicate of a record that does not decrypt
// gets a CorruptedRecordError, and the handler does not run.
func TestCorruptedFailsClosed(t *testing.T) {
	t.Parallel()
	inner := idempotencytest.NewStore()
	runs := 0
	handler := func(ctx context.Context, in struct{ ID string }) (map[string]string, error) {
		runs++
		return map[string]string{"secret": "s3cr3t-" + in.ID}, nil
	}
	wrap := func(aeadKey []byte) *idempotency.Handler {
		s := mustNew(t, inner, responsestore.WithAEAD(newGCM(aeadKey)), responsestore.WithFunctionName("fn"))
		return idempotency.Wrap(s, handler, idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("fn"))
	}
	event, _ := json.Marshal(struct{ ID string }{"a"})
	first, err := wrap(randomKey()).Invoke(context.Background(), event)
	if err != nil {
		t.Fatal(err)
	}
	recs := inner.Records()
	if len(recs) != 1 || bytes.Contains(recs[0].Response, []byte("s3cr3t")) {
		t.Fatalf("stored %d records (%+v), want one, encrypted", len(recs), recs)
	}
	out, err := wrap(randomKey()).Invoke(context.Background(), event)
	if _, ok := errors.AsType[*idempotency.CorruptedRecordError](err); !ok {
		t.Fatalf("duplicate with another key = %q, %v; want a CorruptedRecordError (first response %q)", out, err, first)
	}
	if runs != 1 {
		t.Fatalf("handler ran %d times, want 1", runs)
	}
}

package responsestore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gopowertools/lambda/internal/firstuse"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// store is the Store that New returns, in one of the types at the end of
// this file.
type store struct {
	inner   idempotency.Store
	invoker idempotency.Invoker // inner, when it is one

	compressAt int // -1: no compression
	sealer     sealer
	function   string
	s3         S3Client
	bucket     string
	prefix     string
	offloadAt  int
	logger     *slog.Logger   // nil: slog.Default()
	checked    firstuse.Check // check, before the first Acquire
}

// New returns a Store that keeps its records in inner, with each
// response compressed, encrypted and offloaded to S3 as opts say. With no
// option, it stores every record as inner does.
//
// The Store it returns implements [idempotency.Invoker] exactly when inner
// does, so that the writes a handler stages with
// github.com/gopowertools/lambda/dynamo.Stage are committed with the
// record.
//
// A bad option gives a [*idempotency.ConfigError]. New sends no request:
// before its first Acquire (in Lambda, the first invocation after a cold
// start), the store asks KMS and S3, with that call's context and one
// request each, whether it may use the key of [WithKMS] and the bucket of
// [WithS3], and refuses one that they refuse (missing, disabled, in
// another Region, not allowed to the function's role) with a
// [*idempotency.ConfigError] naming the option, before any record is
// written (docs/large-and-sensitive-responses.md).
func New(inner idempotency.Store, opts ...Option) (idempotency.Store, error) {
	if inner == nil {
		return nil, &idempotency.ConfigError{Name: "responsestore.New", Err: errors.New("nil inner store")}
	}
	s := &store{inner: inner}
	if err := s.build(opts); err != nil {
		return nil, err
	}
	if s.invoker, _ = inner.(idempotency.Invoker); s.invoker != nil {
		return withInvoker{s}, nil
	}
	return s, nil
}

// Acquire writes rec through the inner store, and returns the live record
// it finds with its response read back.
func (s *store) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if err := s.checked.Do(ctx, s.check); err != nil {
		return nil, err
	}
	var existing *idempotency.Record
	err := s.write(ctx, rec, func(r *idempotency.Record) (err error) {
		existing, err = s.inner.Acquire(ctx, r, now)
		return err
	})
	if err != nil || existing == nil {
		return nil, err
	}
	return s.read(ctx, existing)
}

// Complete writes rec through the inner store, its response packed.
func (s *store) Complete(ctx context.Context, rec *idempotency.Record) error {
	return s.write(ctx, rec, func(r *idempotency.Record) error { return s.inner.Complete(ctx, r) })
}

// MarkUncertain is the inner store's: an UNCERTAIN record holds no
// response.
func (s *store) MarkUncertain(ctx context.Context, rec *idempotency.Record) error {
	return s.inner.MarkUncertain(ctx, rec)
}

// Release is the inner store's.
func (s *store) Release(ctx context.Context, key, token string) error {
	return s.inner.Release(ctx, key, token)
}

// Get reads the record through the inner store, its response read back.
func (s *store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	rec, err := s.inner.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return s.read(ctx, rec)
}

// write gives put rec, or a copy of rec whose response is packed: the
// caller's record is never changed. When the inner store refuses the
// record as too large and its body is still in it, the body is offloaded,
// if the store can, and put is called once more.
func (s *store) write(ctx context.Context, rec *idempotency.Record, put func(*idempotency.Record) error) error {
	if len(rec.Response) == 0 {
		return put(rec)
	}
	e, err := s.pack(ctx, rec)
	if err != nil {
		return err
	}
	if e.flags == 0 && !isEnvelope(rec.Response) {
		err = put(rec)
	} else {
		cp := *rec
		cp.Response = e.marshal()
		err = put(&cp)
	}
	if !errors.Is(err, idempotency.ErrRecordTooLarge) || s.s3 == nil || e.flags&flagS3 != 0 {
		return err
	}
	if err := s.offload(ctx, rec, e); err != nil {
		return s.notStored(ctx, rec.Key, "offload", err)
	}
	cp := *rec
	cp.Response = e.marshal()
	return put(&cp)
}

// pack turns the response of rec into an envelope: gzipped when that
// helps, encrypted, and offloaded when over the threshold, as the options
// say. An envelope with no flag holds the response as it is.
func (s *store) pack(ctx context.Context, rec *idempotency.Record) (*envelope, error) {
	e := &envelope{size: len(rec.Response), body: rec.Response}
	if s.compressAt >= 0 && len(e.body) >= s.compressAt {
		if z := compress(e.body); len(z) < len(e.body) {
			e.body = z
			e.flags |= flagGzip
		}
	}
	if s.sealer != nil {
		e.flags |= s.sealer.flag()
		dataKey, sealed, err := s.sealer.seal(ctx, e.body, additionalData(e.flags, e.size, s.function, rec.Key))
		if err != nil {
			return nil, s.notStored(ctx, rec.Key, "encrypt", err)
		}
		e.dataKey, e.body = dataKey, sealed
	}
	if s.s3 != nil && len(e.body) > s.offloadAt {
		if err := s.offload(ctx, rec, e); err != nil {
			return nil, s.notStored(ctx, rec.Key, "offload", err)
		}
	}
	return e, nil
}

// notStored logs and returns the failure to store the response of key.
func (s *store) notStored(ctx context.Context, key, op string, err error) error {
	logger := s.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.ErrorContext(ctx, "responsestore: could not "+op+" the response; the middleware completes the record without it: duplicates get ResponseNotStoredError", "key", key, "error", err)
	return &ResponseError{Key: key, Op: op, Err: err}
}

// read replaces the packed response of rec, a record the inner store
// returned (and so the caller's to change), with the response itself. A
// response that is not an envelope is one stored as it is, by this store
// or before it was used. An envelope that cannot be read back gives a
// [*idempotency.CorruptedRecordError]; a failure to reach S3 or KMS gives
// their error.
func (s *store) read(ctx context.Context, rec *idempotency.Record) (*idempotency.Record, error) {
	if !isEnvelope(rec.Response) {
		return rec, nil
	}
	e, err := parseEnvelope(rec.Response)
	if err != nil {
		return nil, corrupted(rec.Key, "%v", err)
	}
	body := e.body
	if e.flags&flagS3 != 0 {
		if body, err = s.fetch(ctx, rec.Key, e); err != nil {
			return nil, readError(rec.Key, err)
		}
	}
	if enc := e.flags & flagsEncrypt; enc != 0 {
		if s.sealer == nil || s.sealer.flag() != enc {
			return nil, corrupted(rec.Key, "the response is encrypted with %s, which the store is not set up for (WithKMS, WithAEAD)", encryptionName(enc))
		}
		body, err = s.sealer.open(ctx, e.dataKey, body, additionalData(e.flags, e.size, s.function, rec.Key))
		if errors.Is(err, errCannotDecrypt) {
			return nil, corrupted(rec.Key, "the response does not decrypt with this key, function and record key: %v", err)
		}
		if err != nil {
			return nil, readError(rec.Key, err)
		}
	}
	if e.flags&flagGzip != 0 {
		if body, err = decompress(body, e.size); err != nil {
			return nil, corrupted(rec.Key, "the gzipped response: %v", err)
		}
	}
	if len(body) != e.size {
		return nil, corrupted(rec.Key, "the response is %d bytes, the envelope says %d", len(body), e.size)
	}
	rec.Response = body
	return rec, nil
}

// readError is a failure to read the response of key back that may pass:
// S3 or KMS could not be reached. A corrupted record's error is returned
// as it is.
func readError(key string, err error) error {
	if _, ok := errors.AsType[*idempotency.CorruptedRecordError](err); ok {
		return err
	}
	return fmt.Errorf("responsestore: read the response of %q: %w", key, err)
}

func encryptionName(flag byte) string {
	if flag == flagKMS {
		return "KMS"
	}
	return "an AEAD"
}

// The Store that New returns is one of these types, which implement the
// optional interfaces of the inner store, and only those: the middleware
// asks for them with type assertions.

type withInvoker struct{ *store }

var _ idempotency.Invoker = withInvoker{}

func (s withInvoker) StageWrites(ctx context.Context) context.Context {
	return s.invoker.StageWrites(ctx)
}

// Reclaim writes rec through the inner store's Reclaim, its response, if
// it has one, packed.
func (s *store) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	return s.write(ctx, rec, func(r *idempotency.Record) error { return s.inner.Reclaim(ctx, r, token) })
}

package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/typedoor"
)

// engine is the record state machine. It works on the raw event and the
// encoded response, so it is written once and shared by [Handler] and the
// function wrapper; the generic code at the edge only decodes and encodes.
// An engine is immutable once built, apart from the mutex-guarded cache and
// the lease warning flag, so one engine serves concurrent invocations.
type engine struct {
	store        Store
	keyExpr      *jmespath.Expression // "@" for the whole payload
	keyMulti     bool                 // keyExpr ends in a multi-select (see missing)
	validation   *jmespath.Expression // nil: no payload validation
	former       *jmespath.Expression // nil: no former validation (see formerMatch)
	prefix       string
	keys         keyformat.Format // how keys and payload hashes are made
	keyRequired  bool
	expiresAfter time.Duration
	lease        time.Duration
	now          func() time.Time
	logger       *slog.Logger                       // nil: slog.Default() at log time
	replayHook   replayFunc                         // nil: the stored response as it is
	observer     func(context.Context, Observation) // nil: none
	// How a handler's event is decoded into its In (WithUseNumber,
	// WithDisallowUnknownFields).
	useNumber, disallowUnknown bool
	reconcile                  reconcileFunc // nil: UNCERTAIN records wait for an operator
	abandon                    AbandonPolicy
	wait                       bool          // WithWaitForInProgress
	leaseBeyond                time.Duration // WithLeaseBeyondDeadline
	cache                      *cache        // nil: off
	invoker                    Invoker       // store as an Invoker, or nil
	disabled                   bool
	// exprs is keyExpr, then validation when it is set, then the probes
	// of types: what read evaluates on every call.
	exprs []*jmespath.Expression
	types *typedoor.Door // nil: the strict read alone reads as the handler's type does

	leaseWarned atomic.Bool
}

// call runs the user's code and returns its encoded response. A failure to
// encode a successful result is wrapped in *encodeError, so that the engine
// can tell it from the user's own error.
type call func(ctx context.Context, payload []byte) ([]byte, error)

// encodeError reports that the user's code succeeded but its result could
// not be encoded. Its effect has happened, so the key is completed (with no
// response) rather than released for a rerun.
type encodeError struct{ err error }

func (e *encodeError) Error() string { return e.err.Error() }

// result is what an idempotent invocation produced. Each place in the
// engine that ends an invocation says its outcome, rather than a caller
// guessing it from the error afterwards.
type result struct {
	response []byte
	key      string // "" when the invocation ran without idempotency
	outcome  Outcome
	// completedAt is, for a replay, when the replayed record became
	// COMPLETED (zero when it does not say).
	completedAt time.Time
	// handler is how long the user's code ran, when it ran.
	handler time.Duration
	// handlerRan reports that the user's code ran in this invocation.
	handlerRan bool
}

// replayed reports whether the response came from a record, not from fn.
func (r result) replayed() bool { return r.outcome == OutcomeReplayed }

// acquireAttempts bounds how often Acquire is retried when the store reports
// a live record that has in fact expired at our clock, and how often a
// duplicate that waited tries again to take the key.
const acquireAttempts = 3

var errStaleLive = errors.New("the store keeps reporting as live a record that has expired")

// do runs fn under idempotency for the event payload.
func (e *engine) do(ctx context.Context, payload []byte, fn call) (result, error) {
	ctx = e.compatContext(ctx)
	key, hash, fail, err := e.identify(payload)
	if err != nil {
		return result{outcome: fail}, err
	}
	if key == "" {
		e.log().WarnContext(ctx, "idempotency: no idempotency key in the event; running the handler without idempotency", "expression", e.keyExpr.String())
		start := e.startTimer()
		resp, err := fn(withoutKey(ctx), payload)
		if _, ok := err.(*UndecodableEventError); ok {
			return result{outcome: OutcomeUndecodableEvent}, err
		}
		return result{response: resp, outcome: OutcomeNoKey, handler: e.since(start), handlerRan: true}, unwrapEncode(err)
	}

	now := e.now()
	if rec := e.cache.get(key, now); rec != nil {
		return e.replay(ctx, rec, hash, payload) // a copy: the hook's and the caller's
	}

	l := &lease{rec: Record{Key: key, Status: StatusInProgress, LeaseToken: newLeaseToken(), PayloadHash: hash}}
	rec := &l.rec
	for attempt := 1; ; attempt++ {
		rec.Expiry = now.Add(e.expiresAfter)
		l.leaseEnd = e.leaseEnd(ctx, now)
		e.holdUntil(rec, l.leaseEnd)
		existing, err := e.store.Acquire(ctx, rec, now)
		if err != nil {
			return result{key: key, outcome: OutcomeStoreError}, storeError("acquire", key, err)
		}
		if existing == nil || (existing.Status == StatusInProgress && existing.LeaseToken == rec.LeaseToken) {
			// Written, or written by an earlier try of this same request
			// whose answer was lost: either way the lease is ours.
			break
		}
		if existing.Live(now) {
			res, err, again := e.duplicate(ctx, existing, hash, payload, fn, now)
			if !again || attempt == acquireAttempts {
				if again {
					err = &InProgressError{Key: key, LeaseEnd: holderEnd(existing)}
					res = result{key: key, outcome: OutcomeInProgress}
				}
				return res, err
			}
			now = e.now()
			continue
		}
		if attempt == acquireAttempts {
			return result{key: key, outcome: OutcomeStoreError}, &PersistenceError{Op: "acquire", Key: key, Err: errStaleLive}
		}
		now = e.now()
	}
	return e.own(ctx, l, payload, fn)
}

// identify returns the key and the payload hash of payload, before any
// store call; the key is "" when the event has no key and none is
// required. An error comes with the outcome it makes.
func (e *engine) identify(payload []byte) (key, hash string, fail Outcome, err error) {
	keyValue, validated, err := e.read(payload)
	if err != nil {
		return "", "", OutcomeInvalidEvent, err
	}
	if missing(keyValue, e.keyMulti) {
		if e.keyRequired {
			return "", "", OutcomeMissingKey, &MissingKeyError{Expression: e.keyExpr.String()}
		}
		return "", "", "", nil
	}
	if key, err = e.keys.Key(e.prefix, keyValue); err != nil {
		return "", "", OutcomeInvalidEvent, &InvalidEventError{Expression: e.keyExpr.String(), Err: inexact(err)}
	}
	if hash, err = e.payloadHash(validated); err != nil {
		return "", "", OutcomeInvalidEvent, err
	}
	return key, hash, "", nil
}

// read returns what the key and the validation expressions select in
// payload, or an *InvalidEventError. It is the one reading of a request,
// whichever entry point turned it into bytes (an event, a typed handler's
// event, a function wrapper's argument, an HTTP request): jmespath's
// SearchJSONAll reads it in one pass for both expressions, within one
// decoding budget (WithDecodeLimit), with a strict scanner that validates
// all of it and refuses text that a struct decoding could read otherwise
// than the search does (docs/security.md), so that the key, the payload
// hash and the user's code see one request.
func (e *engine) read(payload []byte) (key, validated any, err error) {
	values, err := jmespath.SearchJSONAll(payload, e.exprs...)
	if xe, ok := err.(*jmespath.ExpressionError); ok {
		return nil, nil, &InvalidEventError{Expression: xe.Expression.String(), Err: xe.Err}
	}
	if err != nil {
		return nil, nil, &InvalidEventError{Expression: e.keyExpr.String(), Err: err}
	}
	if e.validation != nil {
		validated = values[1]
	}
	if e.types == nil {
		return values[0], validated, nil
	}
	key, validated, err = e.types.Read(payload, values[0], validated, values[len(values)-len(e.types.Probes):])
	if xe, ok := err.(*jmespath.ExpressionError); ok {
		return nil, nil, &InvalidEventError{Expression: xe.Expression.String(), Err: xe.Err}
	}
	return key, validated, err
}

// payloadHash returns the hash of v, what the validation expression
// selected (nothing hashes as null), or "" when validation is off.
func (e *engine) payloadHash(v any) (string, error) {
	if e.validation == nil {
		return "", nil
	}
	h, err := e.keys.Digest(v)
	if err != nil {
		return "", &InvalidEventError{Expression: e.validation.String(), Err: inexact(err)}
	}
	return h, nil
}

// inexact returns err, or the *InexactNumberError it stands for.
func inexact(err error) error {
	if e, ok := err.(*keyformat.InexactError); ok {
		return &InexactNumberError{Compatibility: Compatibility(e.Mode), Path: e.Path, Number: e.Number}
	}
	return err
}

// leaseEnd is the invocation's deadline (and WithLeaseBeyondDeadline's
// time past it): past it Lambda has given up on the invocation, so its
// key may be taken over.
func (e *engine) leaseEnd(ctx context.Context, now time.Time) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d.Add(e.leaseBeyond)
	}
	if e.leaseWarned.CompareAndSwap(false, true) {
		e.log().WarnContext(ctx, "idempotency: the context has no deadline; leases last the WithLease duration", "lease", e.lease)
	}
	return now.Add(e.lease)
}

// own runs fn while holding the lease l, then completes or releases the
// record, or keeps it UNCERTAIN when fn says its outcome is unknown.
func (e *engine) own(ctx context.Context, l *lease, payload []byte, fn call) (result, error) {
	// fn and the writes after it share the invocation's context, which
	// carries the writes fn staged to the store's Complete.
	ctx = e.invocation(ctx, l)
	returned := false
	defer func() {
		// A panic (or runtime.Goexit) leaves returned false: release the
		// key and let the panic go on, with its original value and stack.
		if !returned {
			e.release(writeContext(ctx), l)
		}
	}()
	start := e.startTimer()
	resp, err := fn(ctx, payload)
	returned = true
	key, ran := l.rec.Key, e.since(start)

	if encErr, ok := err.(*encodeError); ok {
		// The effect has happened: the key completes, with no response.
		outcome, err := e.complete(writeContext(ctx), l, nil, true)
		if err != nil {
			return result{key: key, outcome: outcome, handler: ran, handlerRan: true}, err
		}
		return result{key: key, outcome: outcome, handler: ran, handlerRan: true}, encErr.err
	}
	if undecodable, ok := err.(*UndecodableEventError); ok {
		// fn did not run: the event cannot reach it, on this delivery
		// or any other, so the key is free for one that can.
		e.release(writeContext(ctx), l)
		return result{key: key, outcome: OutcomeUndecodableEvent}, undecodable
	}
	if err != nil {
		if _, ok := errors.AsType[*UncertainError](err); ok {
			e.hold(writeContext(ctx), l)
			return result{key: key, outcome: OutcomeUncertain, handler: ran, handlerRan: true}, err
		}
		e.release(writeContext(ctx), l)
		return result{key: key, outcome: OutcomeReleased, handler: ran, handlerRan: true}, err
	}
	outcome, err := e.complete(writeContext(ctx), l, resp, false)
	if err != nil {
		return result{key: key, outcome: outcome, handler: ran, handlerRan: true}, err
	}
	return result{response: resp, key: key, outcome: outcome, handler: ran, handlerRan: true}, nil
}

// storeError maps a store failure: a corrupted record, or a store that
// its configuration keeps from working (a permission its role lacks), is
// reported as such, since retrying cannot help; anything else is a
// *PersistenceError.
func storeError(op, key string, err error) error {
	if corrupted, ok := errors.AsType[*CorruptedRecordError](err); ok {
		return corrupted
	}
	if config, ok := errors.AsType[*ConfigError](err); ok {
		return config
	}
	return &PersistenceError{Op: op, Key: key, Err: err}
}

func (e *engine) log() *slog.Logger {
	if e.logger != nil {
		return e.logger
	}
	return slog.Default()
}

// unwrapEncode gives the caller the encoding error itself.
func unwrapEncode(err error) error {
	if encErr, ok := err.(*encodeError); ok {
		return encErr.err
	}
	return err
}

// Keys and payload hashes are made by internal/keyformat, in this
// library's format or a Powertools runtime's ([WithCompatibility]).

// missing reports whether v, what the key expression selected, counts as
// no key at all: null, "", [], {}, an array holding a null, or, when the
// expression is a multi-select (multi), an object holding a null. 0 and
// false are keys: a caller may well number its requests from zero. An
// array or object with a null is what a multi-select key such as
// [customer_id, order_id] or {c: customer_id, o: order_id} gives when one
// of its paths is absent; the others alone would key the event, and a
// customer's second order would get the first one's response. An object
// that the expression selects as it is in the event (the whole event, say)
// may hold nulls of its own, and is a key.
func missing(v any, multi bool) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0 || slices.Contains(v, nil)
	case map[string]any:
		if multi {
			for _, m := range v {
				if m == nil {
					return true
				}
			}
		}
		return len(v) == 0
	}
	return false
}

// hold keeps the key of a handler whose outcome is uncertain: the record
// becomes UNCERTAIN, with its lease token and no lease, until it expires or
// is reconciled. The handler's staged writes, if any, are not committed:
// the store commits them only with a COMPLETED record.
func (e *engine) hold(ctx context.Context, l *lease) {
	rec := &l.rec
	*rec = Record{
		Key:         rec.Key,
		Status:      StatusUncertain,
		Expiry:      e.now().Add(e.expiresAfter),
		LeaseToken:  rec.LeaseToken,
		PayloadHash: rec.PayloadHash,
	}
	if err := e.store.Complete(ctx, rec); err != nil {
		e.log().ErrorContext(ctx, "idempotency: could not mark the outcome UNCERTAIN; the key stays INPROGRESS until the lease ends, and the handler RUNS AGAIN after it", "key", rec.Key, "lease_end", l.leaseEnd, "error", err)
	}
}

// invocation returns the context the handler runs with: ctx with the key
// of l, and with a staging place when the store has one.
func (e *engine) invocation(ctx context.Context, l *lease) context.Context {
	if e.invoker != nil {
		ctx = e.invoker.NewInvocation(ctx)
	}
	return withKey(ctx, l.rec.Key)
}

// writeContext is the context for the writes after the handler: they are
// made even when the invocation's context is done, because the effect has
// happened, and a record of it is worth more than promptness. That holds
// for a context still live too: its deadline can pass while the write is
// on its way, and a cancelled COMPLETED leaves the key to the next
// duplicate (dynamo's TestDeadlineDuringComplete).
func writeContext(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}

// complete stores resp as the key's response, or no response when omitted
// (a success whose result could not be encoded). Once the handler has
// succeeded, a failure to store its response is logged, not returned: the
// caller would retry, and rerun an effect that has already happened. The
// exception is a store that commits the handler's staged writes with the
// record ([Invoker]): when it reports that they were not committed, or
// that it cannot tell (a [*CommitError]), the effect did not happen, or
// may not have, and saying it did would be a lie.
func (e *engine) complete(ctx context.Context, l *lease, resp []byte, omitted bool) (Outcome, error) {
	rec := &l.rec
	now := e.now()
	*rec = Record{
		Key:             rec.Key,
		Status:          StatusComplete,
		Expiry:          now.Add(e.expiresAfter),
		LeaseToken:      rec.LeaseToken,
		Response:        resp,
		ResponseOmitted: omitted,
		PayloadHash:     rec.PayloadHash,
		CompletedAt:     now,
	}
	if omitted {
		rec.ResponseOmittedReason = ReasonNotEncoded
	}
	err := e.store.Complete(ctx, rec)
	if errors.Is(err, ErrRecordTooLarge) {
		// The store says why: the item limit, or a wrapper's offload or
		// encryption that failed (responsestore's *ResponseError).
		why := err
		rec.Response, rec.ResponseOmitted, rec.ResponseOmittedReason = nil, true, notStoredReason(err)
		if err = e.store.Complete(ctx, rec); err == nil {
			e.log().WarnContext(ctx, "idempotency: the response could not be stored; duplicates get ResponseNotStoredError", "key", rec.Key, "size", len(resp), "reason", rec.ResponseOmittedReason, "error", why)
		}
	}
	if err != nil {
		err = e.completeAgain(ctx, rec, l.leaseEnd, err)
	}
	if err == nil {
		e.cache.put(rec)
		return OutcomeNew, nil
	}
	if commit, ok := errors.AsType[*CommitError](err); ok {
		return e.notCommitted(ctx, l, commit)
	}
	if errors.Is(err, ErrLeaseLost) {
		e.log().ErrorContext(ctx, "idempotency: the lease was lost before the handler finished; another invocation took the key, so the effect may have run twice", "key", rec.Key)
		return OutcomeLeaseLost, nil
	}
	e.log().ErrorContext(ctx, "idempotency: could not store the response; duplicates get InProgressError until the lease ends, then run again", "key", rec.Key, "error", err)
	return OutcomeNew, nil
}

// notStoredReason is why the store refused a response, err matching
// [ErrRecordTooLarge]: its NotStoredReason, else [ReasonTooLarge].
func notStoredReason(err error) string {
	if r, ok := errors.AsType[interface {
		error
		NotStoredReason() string
	}](err); ok {
		return r.NotStoredReason()
	}
	return ReasonTooLarge
}

// notCommitted ends an invocation whose staged writes and COMPLETED record
// the store did not commit, or cannot tell whether it did.
func (e *engine) notCommitted(ctx context.Context, l *lease, commit *CommitError) (Outcome, error) {
	key := l.rec.Key
	switch commit.State {
	case CommitRefused:
		// The handler's own writes were refused: the handler failed, so
		// the key is released for a retry, as after any handler error.
		e.release(ctx, l)
		return OutcomeReleased, commit.Err
	case CommitLeaseLost:
		e.log().ErrorContext(ctx, "idempotency: the lease was lost before the commit: NOTHING WAS COMMITTED, neither the handler's staged writes nor its response; another invocation holds the key", "key", key, "error", commit)
		return OutcomeLeaseLost, &PersistenceError{Op: "complete", Key: key, Err: commit}
	default:
		e.log().ErrorContext(ctx, "idempotency: unknown whether the handler's staged writes were committed; the record is kept: COMPLETED if they were, else it runs again once the lease ends", "key", key, "error", commit)
	}
	return OutcomeStoreError, &PersistenceError{Op: "complete", Key: key, Err: commit}
}

// release deletes the INPROGRESS record so that a retry can run the
// handler. If that fails the lease still ends on its own.
func (e *engine) release(ctx context.Context, l *lease) {
	if err := e.store.Release(ctx, l.rec.Key, l.rec.LeaseToken); err != nil {
		e.log().ErrorContext(ctx, "idempotency: could not release the key; it stays blocked until the lease ends", "key", l.rec.Key, "lease_end", l.leaseEnd, "error", err)
	}
}

// completeRetryDelays are the waits before each further attempt at a
// COMPLETED write that failed for a reason that may pass (throttling, a
// server error, a broken connection). The store's client has retried
// already (the AWS SDK makes three attempts within about a second), but a
// success whose record is never written is the one case where the effect
// runs again once the lease ends: a few more attempts, spread over two
// seconds, are cheap next to that.
var completeRetryDelays = [...]time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second}

// completeRetryMargin is the least time the lease must have left after a
// wait for one more attempt to be made: the response must still reach
// Lambda before the invocation's deadline, or the caller sees a timeout and
// retries anyway.
const completeRetryMargin = 500 * time.Millisecond

// completeAgain makes further attempts at the COMPLETED write of rec after
// the first failed with err, while the failure is one that may pass and the
// lease, which ends at leaseEnd, leaves time. A retry is safe whatever
// became of the earlier attempts: the write is conditioned on the lease
// token, and rewriting a record COMPLETED with the same token succeeds (the
// Store contract). It returns nil once an attempt succeeds, else the last
// error.
//
// The lease ends at the invocation's deadline, a time of the real clock,
// so the time left is measured on that clock.
func (e *engine) completeAgain(ctx context.Context, rec *Record, leaseEnd time.Time, err error) error {
	for _, wait := range completeRetryDelays {
		if !mayPass(err) || until(ctx, leaseEnd) < wait+completeRetryMargin {
			return err
		}
		e.log().WarnContext(ctx, "idempotency: could not store the response; trying again", "key", rec.Key, "wait", wait, "error", err)
		sleep(ctx, wait) // ctx is writeContext's: never done
		if err = e.store.Complete(ctx, rec); err == nil {
			return nil
		}
	}
	return err
}

// mayPass reports whether another attempt at a COMPLETED write could
// succeed after err. The typed outcomes are final: the lease is lost, the
// record is too large, a commit of staged writes was refused or its outcome
// is unknown (each has its own handling in complete).
func mayPass(err error) bool {
	_, commit := errors.AsType[*CommitError](err)
	_, corrupted := errors.AsType[*CorruptedRecordError](err)
	return !commit && !corrupted && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrRecordTooLarge)
}

// lease is what one invocation holds while it owns a key.
//
// The record is INPROGRESS as Acquire (or Reclaim) wrote it, then becomes
// in place the COMPLETED (or UNCERTAIN) record given to Complete: a Store
// keeps no *Record it is given (see [Store]), so one record serves both
// writes.
type lease struct {
	rec      Record
	leaseEnd time.Time // rec's lease end, which the final record does not carry
}

// newLeaseToken returns a new lease token, unique to the invocation: 32
// lowercase hex digits of crypto/rand, the form the records hold.
// Complete and Release are conditioned on it, so that an invocation whose
// lease ended cannot touch the record of the one that took the key over,
// and Acquire takes a live INPROGRESS record carrying its own token for an
// earlier try of the same request.
func newLeaseToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails: since Go 1.24 it crashes the program instead
	return hex.EncodeToString(b[:])
}

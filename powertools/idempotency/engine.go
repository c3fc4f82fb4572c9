package idempotency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/jmespath"
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
	// exprs is keyExpr, then validation when it is set: what read
	// evaluates on every call.
	exprs []*jmespath.Expression

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
	// COMPLETE (zero when it does not say).
	completedAt time.Time
	// handler is how long the user's code ran, when it ran.
	handler time.Duration
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
		return result{response: resp, outcome: OutcomeNoKey, handler: e.since(start)}, unwrapEncode(err)
	}

	now := e.now()
	if rec := e.cache.get(key, now); rec != nil {
		cp := *rec // the hook gets its own copy, not the cache's
		return e.replay(ctx, &cp, hash)
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
// SearchJSONAll reads it in one pass for both expressions, with a strict
// scanner that validates all of it and refuses text that a struct decoding
// could read otherwise than the search does (docs/security.md), so that
// the key, the payload hash and the user's code see one request.
func (e *engine) read(payload []byte) (key, validated any, err error) {
	exprs := e.exprs
	values, err := jmespath.SearchJSONAll(payload, exprs...)
	if err != nil && len(exprs) == 1 {
		return nil, nil, &InvalidEventError{Expression: exprs[0].String(), Err: err}
	}
	if err != nil {
		// Name the expression that fails: on this path only, the event
		// is read once more per expression.
		for _, x := range exprs {
			if _, xErr := x.SearchJSON(payload); xErr != nil {
				return nil, nil, &InvalidEventError{Expression: x.String(), Err: xErr}
			}
		}
		return nil, nil, &InvalidEventError{Expression: "@", Err: err}
	}
	if len(values) > 1 {
		validated = values[1]
	}
	return values[0], validated, nil
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

// duplicate answers an invocation whose key is held by the live record
// existing. A payload conflict is reported first, whatever the record's
// state: a different request reusing a key is a client bug worth
// surfacing even while the first request is still running. again reports
// that the key may be free now (see inProgress).
func (e *engine) duplicate(ctx context.Context, existing *Record, hash string, payload []byte, fn call, now time.Time) (res result, err error, again bool) {
	key := existing.Key
	switch existing.Status {
	case StatusComplete:
		e.cache.put(existing)
		res, err = e.replay(ctx, existing, hash)
		return res, err, false
	case StatusUncertain:
		res, err = e.resolve(ctx, existing, hash, payload, fn, now)
		return res, err, false
	case StatusInProgress:
		if err := e.checkPayload(key, existing, hash); err != nil {
			return result{key: key, outcome: OutcomeConflict}, err, false
		}
		return e.inProgress(ctx, existing, hash, payload, fn, now)
	}
	return result{key: key, outcome: OutcomeStoreError}, &CorruptedRecordError{Key: key, Reason: fmt.Sprintf("unknown status %q", existing.Status)}, false
}

// replay returns the response stored in rec, a COMPLETE record, after
// checking the payload. An error of the replay hook is a replay's.
func (e *engine) replay(ctx context.Context, rec *Record, hash string) (result, error) {
	res := result{key: rec.Key, outcome: OutcomeReplayed, completedAt: rec.CompletedAt}
	if err := e.checkPayload(rec.Key, rec, hash); err != nil {
		return result{key: rec.Key, outcome: OutcomeConflict}, err
	}
	if rec.ResponseOmitted {
		res.outcome = OutcomeNotStored
		return res, &ResponseNotStoredError{Key: rec.Key, Reason: rec.ResponseOmittedReason}
	}
	if e.replayHook == nil {
		res.response = rec.Response
		return res, nil
	}
	var err error
	res.response, err = e.replayHook(ctx, rec)
	return res, err
}

// replayFunc is a replay hook on encoded responses: it returns the response
// a replay of rec returns.
type replayFunc func(ctx context.Context, rec *Record) ([]byte, error)

// checkPayload compares the stored payload hash with the event's. A record
// stored before validation was turned on has no hash and conflicts: the
// middleware cannot tell that it was the same request.
func (e *engine) checkPayload(key string, rec *Record, hash string) error {
	if e.validation == nil || rec.PayloadHash == hash {
		return nil
	}
	return &PayloadConflictError{Key: key, StoredHash: rec.PayloadHash, EventHash: hash}
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
			return result{key: key, outcome: outcome, handler: ran}, err
		}
		return result{key: key, outcome: outcome, handler: ran}, encErr.err
	}
	if err != nil {
		if _, ok := errors.AsType[*UncertainError](err); ok {
			e.hold(writeContext(ctx), l)
			return result{key: key, outcome: OutcomeUncertain, handler: ran}, err
		}
		e.release(writeContext(ctx), l)
		return result{key: key, outcome: OutcomeReleased, handler: ran}, err
	}
	outcome, err := e.complete(writeContext(ctx), l, resp, false)
	if err != nil {
		return result{key: key, outcome: outcome, handler: ran}, err
	}
	return result{response: resp, key: key, outcome: outcome, handler: ran}, nil
}

// storeError maps a store failure: a corrupted record is reported as such,
// since retrying cannot help; anything else is a *PersistenceError.
func storeError(op, key string, err error) error {
	if corrupted, ok := errors.AsType[*CorruptedRecordError](err); ok {
		return corrupted
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

package idempotency

import (
	"context"
	"errors"
	"log/slog"
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
//
// An invocation reads its key and payload hash from the request, takes a
// lease on the key, runs the handler while it holds it, then completes
// the record; or, when another invocation holds the key, it gets a
// duplicate's answer: the stored response, an in-progress error after a
// wait, or, for a holder that ended without completing, what the abandon
// policy and the UNCERTAIN record say.
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
	// leaseWithoutDeadline is WithLease's: the lease of an invocation
	// whose context has no deadline.
	leaseWithoutDeadline time.Duration
	clock                func() time.Time                   // WithClock
	logger               *slog.Logger                       // nil: slog.Default() at log time
	replayHook           replayFunc                         // nil: the stored response as it is
	observer             func(context.Context, Observation) // nil: none
	// How a handler's event is decoded into its In (WithUseNumber,
	// WithDisallowUnknownFields).
	useNumber, disallowUnknown bool
	reconciler                 reconcileFunc // nil: UNCERTAIN records wait for an operator
	abandon                    AbandonPolicy
	wait                       bool          // WithWaitForInProgress
	leaseBeyond                time.Duration // WithLeaseBeyondDeadline
	cache                      *cache        // nil: off
	invoker                    Invoker       // store as an Invoker, or nil
	disabled                   bool
	// exprs is keyExpr, then validation when it is set, then the probes
	// of types: what readRequest evaluates on every call.
	exprs []*jmespath.Expression
	types *typedoor.Door // nil: the strict read alone reads as the handler's type does

	leaseWarned atomic.Bool
}

// call runs the user's code and returns its encoded response. A failure to
// encode a successful result is wrapped in *encodeError, so that the engine
// can tell it from the user's own error.
type call func(ctx context.Context, payload []byte) ([]byte, error)

// result is what an idempotent invocation produced.
type result struct {
	response []byte
	key      string // "" when the invocation ran without idempotency
	// outcome is what the invocation's path made of it where its error
	// alone does not say: a success, a handler's failure, a lost lease.
	// "" otherwise: the row of its error in endings gives it.
	outcome Outcome
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

// invocation is one call under idempotency: the facts that its steps
// share, so that each step takes what it adds and no more.
type invocation struct {
	*engine
	// ctx is the caller's context; once the invocation holds the key,
	// the handler's (handlerContext).
	ctx     context.Context
	payload []byte
	fn      call
	key     string
	hash    string // the payload hash; "" without validation
	// now is the time on the wrapper's clock when the invocation last
	// looked at the store: what records are judged live by.
	now time.Time
	// lease is what the invocation holds once it has the key.
	lease lease
}

// acquireAttempts bounds how often Acquire is retried when the store reports
// a live record that has in fact expired at our clock, and how often a
// duplicate that waited tries again to take the key.
const acquireAttempts = 3

var errStaleLive = errors.New("the store keeps reporting as live a record that has expired")

// do runs fn under idempotency for the event payload.
func (e *engine) do(ctx context.Context, payload []byte, fn call) (result, error) {
	ctx = e.compatContext(ctx)
	key, hash, err := e.keyOf(payload)
	if err != nil {
		return result{}, err
	}
	if key == "" {
		return e.withoutKey(ctx, payload, fn)
	}
	inv := &invocation{engine: e, ctx: ctx, payload: payload, fn: fn, key: key, hash: hash, now: e.clock()}
	if rec := e.cache.get(key, inv.now); rec != nil {
		return inv.replay(rec) // a copy: the hook's and the caller's
	}
	return inv.acquire()
}

// withoutKey runs fn without idempotency, for an event without a key when
// none is required.
func (e *engine) withoutKey(ctx context.Context, payload []byte, fn call) (result, error) {
	e.log().WarnContext(ctx, "idempotency: no idempotency key in the event; running the handler without idempotency", "expression", e.keyExpr.String())
	start := e.startTimer()
	resp, err := fn(withoutKey(ctx), payload)
	if _, ok := err.(*UndecodableEventError); ok {
		return result{}, err
	}
	return result{response: resp, outcome: OutcomeNoKey, handler: e.since(start), handlerRan: true}, unwrapEncode(err)
}

// acquire takes the key with a new INPROGRESS record and runs the handler,
// or answers the invocation as a duplicate of the live record that holds
// the key.
func (inv *invocation) acquire() (result, error) {
	inv.lease = lease{rec: Record{Key: inv.key, Status: StatusInProgress, LeaseToken: newLeaseToken(), PayloadHash: inv.hash}}
	rec := &inv.lease.rec
	for attempt := 1; ; attempt++ {
		rec.Expiry = inv.now.Add(inv.expiresAfter)
		inv.lease.end = inv.leaseEnd()
		inv.setLease(rec, inv.lease.end)
		existing, err := inv.store.Acquire(inv.ctx, rec, inv.now)
		if err != nil {
			return result{key: inv.key}, storeError("acquire", inv.key, err)
		}
		if existing == nil || (existing.Status == StatusInProgress && existing.LeaseToken == rec.LeaseToken) {
			// Written, or written by an earlier try of this same request
			// whose answer was lost: either way the lease is ours.
			return inv.runHandler()
		}
		switch {
		case existing.Live(inv.now):
			res, err, reacquire := inv.duplicate(existing)
			if !reacquire {
				return res, err
			}
			if attempt == acquireAttempts {
				return result{key: inv.key}, &InProgressError{Key: inv.key, LeaseEnd: holderDeadline(existing)}
			}
		case attempt == acquireAttempts:
			return result{key: inv.key}, &PersistenceError{Op: "acquire", Key: inv.key, Err: errStaleLive}
		}
		inv.now = inv.clock()
	}
}

// runHandler runs fn while holding the lease, then completes or releases
// the record, or marks it UNCERTAIN when fn says its outcome is unknown.
func (inv *invocation) runHandler() (result, error) {
	// fn and the writes after it share the invocation's context, which
	// carries the writes fn staged to the store's Complete.
	inv.ctx = inv.handlerContext()
	returned := false
	defer func() {
		// A panic (or runtime.Goexit) leaves returned false: release the
		// key and let the panic go on, with its original value and stack.
		if !returned {
			inv.release()
		}
	}()
	start := inv.startTimer()
	resp, err := inv.fn(inv.ctx, inv.payload)
	returned = true
	ran := result{key: inv.key, handler: inv.since(start), handlerRan: true}

	if encErr, ok := err.(*encodeError); ok {
		// The effect has happened: the key completes, with no response.
		ran.outcome, err = inv.complete(nil, true)
		if err != nil {
			return ran, err
		}
		return ran, encErr.err
	}
	if undecodable, ok := err.(*UndecodableEventError); ok {
		// fn did not run: the event cannot reach it, on this delivery
		// or any other, so the key is free for one that can.
		inv.release()
		return result{key: inv.key}, undecodable
	}
	if err != nil {
		if _, ok := errors.AsType[*UncertainError](err); ok {
			inv.markUncertain()
			ran.outcome = OutcomeUncertain
			return ran, err
		}
		inv.release()
		ran.outcome = OutcomeReleased
		return ran, err
	}
	if ran.outcome, err = inv.complete(resp, false); err != nil {
		return ran, err
	}
	ran.response = resp
	return ran, nil
}

// handlerContext returns the context the handler runs with: the
// invocation's, with its key, and with a staging place when the store has
// one.
func (inv *invocation) handlerContext() context.Context {
	ctx := inv.ctx
	if inv.invoker != nil {
		ctx = inv.invoker.StageWrites(ctx)
	}
	return withKey(ctx, inv.key)
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

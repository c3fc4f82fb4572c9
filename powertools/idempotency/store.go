package idempotency

import (
	"context"
	"time"
)

// Store keeps idempotency records. Implementations must make each method
// atomic for a key: two concurrent Acquire calls for one key never both
// succeed. [github.com/gopowertools/lambda/dynamo.Store] keeps records in
// DynamoDB, [github.com/gopowertools/lambda/redis.Store] in Redis or
// Valkey; [github.com/gopowertools/lambda/powertools/idempotency/idempotencytest.Store]
// keeps them in memory, with the same semantics, for tests.
//
// Each method writes what its name says: Acquire an INPROGRESS record,
// Complete a COMPLETED one, MarkUncertain an UNCERTAIN one; Reclaim takes
// an UNCERTAIN record over, Release deletes one, and Get reads.
//
// A Store must not keep, or change, a *Record it is given once the call
// returns, as an io.Writer must not keep p: the middleware reuses the
// INPROGRESS record it gave Acquire as the COMPLETED record it gives
// Complete. A record a Store returns is the caller's.
//
// The conformance suite in idempotencytest ([idempotencytest.TestStore])
// checks a Store against these rules.
type Store interface {
	// Acquire writes rec, an INPROGRESS record, unless a live record holds
	// rec.Key at now ([Record.Live]: while now is before its Expiry and,
	// for INPROGRESS, before its LeaseEnd). Acquire returns (nil, nil) when
	// rec was written, and the live record (with a nil error) when one
	// exists. A retried Acquire whose earlier attempt wrote rec, its reply
	// lost, may return that record: it carries rec.LeaseToken, and the
	// middleware takes it as written. A record that cannot be decoded gives
	// a [*CorruptedRecordError].
	Acquire(ctx context.Context, rec *Record, now time.Time) (existing *Record, err error)

	// Complete replaces the record rec.Key with rec, a COMPLETED record,
	// when the stored record carries rec.LeaseToken. Otherwise it returns
	// [ErrLeaseLost]. Completing a record already completed with the same
	// token succeeds, so that a retried request is harmless. When the
	// store cannot keep rec's response, it returns an error matching
	// [ErrUnstorableResponse], such as [ErrRecordTooLarge], and stores
	// nothing. An [Invoker] commits the handler's staged writes with it.
	Complete(ctx context.Context, rec *Record) error

	// MarkUncertain replaces the record rec.Key with rec, an UNCERTAIN
	// record, when the stored record carries rec.LeaseToken; otherwise it
	// returns [ErrLeaseLost]. The middleware writes one when a handler
	// cannot tell whether its effect happened ([Uncertain]), or for an
	// invocation that ended without completing, under [AbandonUncertain],
	// with that invocation's token. Marking a record already UNCERTAIN
	// with the same token succeeds. An [Invoker] commits no staged write
	// with it.
	MarkUncertain(ctx context.Context, rec *Record) error

	// Release deletes the record key when it carries token. A missing record
	// is not an error (a retried release finds its work done); a record with
	// another token gives [ErrLeaseLost] and is left alone.
	Release(ctx context.Context, key, token string) error

	// Reclaim replaces the record rec.Key with rec when the stored record
	// is UNCERTAIN and carries token; otherwise it returns [ErrLeaseLost]
	// and changes nothing. Of two invocations that read the same
	// UNCERTAIN record, only one can reclaim it, and reconcile it (see
	// [WithReconcile]). A Reclaim retried after its reply was lost finds
	// the record carrying rec.LeaseToken, its own, and succeeds.
	Reclaim(ctx context.Context, rec *Record, token string) error

	// Get reads the record key with a consistent read. It returns
	// [ErrRecordNotFound] when there is none.
	Get(ctx context.Context, key string) (*Record, error)
}

// Invoker is an optional interface of a [Store] that commits an
// invocation's own writes together with its COMPLETED record, as
// github.com/gopowertools/lambda/dynamo.Store does with one
// TransactWriteItems.
//
// Before the handler runs, the middleware calls StageWrites and gives the
// handler the context it returns, so the store can keep the invocation's
// staged writes on it; the middleware then passes that same context to
// Complete. The idempotency package never sees the staged writes: it only
// carries the context from the one call to the other.
type Invoker interface {
	// StageWrites returns ctx with a place for the writes that the
	// invocation's handler stages, empty.
	StageWrites(ctx context.Context) context.Context
}

// formerInvoker is an Invoker as it was until the release after v0.1.0:
// a store that has its method alone is refused, since it would commit
// none of the handler's staged writes.
type formerInvoker interface {
	NewInvocation(ctx context.Context) context.Context
}

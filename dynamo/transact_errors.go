package dynamo

import (
	"errors"
	"fmt"
)

// Errors of staging (see [Stage]).
var (
	// ErrNotInInvocation is returned by [Stage] outside a handler made
	// idempotent with a [Store], or after it returned: there is no
	// transaction to add the writes to, and sending them alone would lose
	// the guarantee.
	ErrNotInInvocation = errors.New("dynamo: Stage needs the context of a handler made idempotent with a dynamo.Store")
	// ErrNoTransactions is returned by [Stage] when the Store's client
	// does not implement [TransactWriter].
	ErrNoTransactions = errors.New("dynamo: the Store's client cannot send TransactWriteItems")
)

// InvalidWriteError is returned by [Stage] for a write DynamoDB would
// refuse: not exactly one operation, no table, no key.
type InvalidWriteError struct {
	Index  int // in the writes passed to that Stage call
	Reason string
}

func (e *InvalidWriteError) Error() string {
	return fmt.Sprintf("dynamo: staged write %d: %s", e.Index, e.Reason)
}

// TransactionLimitError reports that the staged writes and the idempotency
// record would pass one of DynamoDB's transaction limits: Limit is
// [LimitItems], [LimitSize] or [LimitSameItem]. [Stage] returns it when
// the write that passes the limit is staged. When the record's response is
// what makes the transaction too large, Complete returns it wrapped with
// [idempotency.ErrRecordTooLarge], and the middleware commits the writes
// with a record without the response (duplicates then get
// [*idempotency.ResponseNotStoredError]); otherwise nothing is committed
// and the middleware returns it to the caller as the handler's own error.
type TransactionLimitError struct {
	Limit    string
	Got, Max int // items or bytes
	// Index is the write that would write an item a second time (in the
	// order staged; the record comes last), and Other the first write of
	// that item; -1 and 0 for the other limits.
	Index, Other int
}

func (e *TransactionLimitError) Error() string {
	if e.Limit == LimitSameItem {
		return fmt.Sprintf("dynamo: staged write %d writes the same item as write %d: DynamoDB allows %s", e.Index, e.Other, e.Limit)
	}
	return fmt.Sprintf("dynamo: %d is over DynamoDB's %s of %d", e.Got, e.Limit, e.Max)
}

// StagedWriteError is what an idempotent invocation returns when DynamoDB
// cancelled its transaction because of one of the handler's staged writes,
// most often its condition (Code "ConditionalCheckFailed"). Nothing was
// committed, the key was released, and the invocation failed as if the
// handler had returned this error. It unwraps to the SDK's
// *types.TransactionCanceledException.
type StagedWriteError struct {
	Index   int    // the write, in the order staged
	Code    string // the cancellation reason's code
	Message string
	Err     error
}

func (e *StagedWriteError) Error() string {
	return fmt.Sprintf("dynamo: staged write %d was refused (%s: %s); nothing was committed", e.Index, e.Code, e.Message)
}

func (e *StagedWriteError) Unwrap() error { return e.Err }

// TransactionError is what an idempotent invocation returns when DynamoDB
// refused its transaction as a whole (a ValidationException, say, or a
// transaction conflict, or a server that does not support transactions):
// nothing was committed, the key was released. It unwraps to the SDK's
// error.
type TransactionError struct {
	Code    string
	Message string
	Err     error
}

func (e *TransactionError) Error() string {
	msg := fmt.Sprintf("dynamo: TransactWriteItems refused (%s: %s); nothing was committed", e.Code, e.Message)
	if e.Code == "UnknownOperationException" {
		msg += "; the server does not support transactions"
	}
	return msg
}

func (e *TransactionError) Unwrap() error { return e.Err }

package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TransactWriter is the part of the DynamoDB API that commits staged
// writes. *dynamodb.Client satisfies it; a [Client] that does not makes
// [Stage] fail with [ErrNoTransactions].
type TransactWriter interface {
	TransactWriteItems(ctx context.Context, params *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// staging holds the writes one invocation staged, until its Complete.
type staging struct {
	store *Store

	mu        sync.Mutex
	items     []types.TransactWriteItem
	committed bool // Complete sent them: later writes would be lost
}

type stagingKey struct{}

var _ idempotency.Invoker = (*Store)(nil)

// StageWrites implements [idempotency.Invoker]: it returns ctx with an
// empty place for the writes the invocation stages with [Stage]. The
// middleware calls it before the handler runs.
func (s *Store) StageWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, stagingKey{}, &staging{store: s})
}

// NewInvocation is [Store.StageWrites].
//
// Deprecated: idempotency.Invoker's method is StageWrites; use it.
func (s *Store) NewInvocation(ctx context.Context) context.Context {
	return s.StageWrites(ctx)
}

// Stage adds writes to the invocation that ctx belongs to, instead of
// sending them: they are sent when the handler returns successfully, in one
// TransactWriteItems together with the COMPLETED idempotency record, which
// is conditioned on the invocation's lease token. Either all of them and
// the record are committed, or none. If the handler returns an error, or
// panics, they are never sent.
//
// Each write is a Put, Update, Delete or ConditionCheck, with its own table
// and its own condition expression. When a condition of a staged write
// fails, nothing is committed and the invocation returns a
// [*StagedWriteError] naming it, as if the handler had failed: its key is
// released, so a retry runs the handler again.
//
// Stage returns [ErrNotInInvocation] when ctx is not the context of a
// handler made idempotent with a [Store], or its writes were already sent;
// writes staged by a handler that then fails are dropped. It returns
// [ErrNoTransactions] when the Store's client cannot send
// transactions, or its table is a global table in multi-Region strong
// consistency, which does not support them; an [*InvalidWriteError] for
// a malformed write, and a [*TransactionLimitError] when the writes could
// not fit in one transaction with the record. It is safe for concurrent
// use.
func Stage(ctx context.Context, writes ...types.TransactWriteItem) error {
	st, _ := ctx.Value(stagingKey{}).(*staging)
	if st == nil {
		return ErrNotInInvocation
	}
	if err := st.store.transactions(); err != nil {
		return err
	}
	for i, w := range writes {
		if err := validWrite(w); err != nil {
			return &InvalidWriteError{Index: i, Reason: err.Error()}
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.committed {
		return fmt.Errorf("%w: the invocation has already completed", ErrNotInInvocation)
	}
	all := append(st.items[:len(st.items):len(st.items)], writes...)
	// The record is not known yet: one place is kept for it, and its size
	// is checked again at Complete.
	if err := st.store.checkTransaction(all, 1); err != nil {
		return err
	}
	st.items = all
	return nil
}

// staged returns the writes staged on ctx for s and marks them sent, or
// nil.
func (s *Store) staged(ctx context.Context) []types.TransactWriteItem {
	st, _ := ctx.Value(stagingKey{}).(*staging)
	if st == nil || st.store != s {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.committed = true
	return st.items
}

// validWrite checks that w is exactly one operation with a table and a
// key, as DynamoDB requires.
func validWrite(w types.TransactWriteItem) error {
	n := 0
	var table *string
	var key map[string]types.AttributeValue
	if w.Put != nil {
		n++
		table, key = w.Put.TableName, w.Put.Item
	}
	if w.Update != nil {
		n++
		table, key = w.Update.TableName, w.Update.Key
		if w.Update.UpdateExpression == nil || *w.Update.UpdateExpression == "" {
			return errors.New("an Update needs an UpdateExpression")
		}
	}
	if w.Delete != nil {
		n++
		table, key = w.Delete.TableName, w.Delete.Key
	}
	if w.ConditionCheck != nil {
		n++
		table, key = w.ConditionCheck.TableName, w.ConditionCheck.Key
		if w.ConditionCheck.ConditionExpression == nil || *w.ConditionCheck.ConditionExpression == "" {
			return errors.New("a ConditionCheck needs a ConditionExpression")
		}
	}
	switch {
	case n != 1:
		return fmt.Errorf("want exactly one of Put, Update, Delete and ConditionCheck, got %d", n)
	case table == nil || *table == "":
		return errors.New("no TableName")
	case len(key) == 0:
		return errors.New("no key (Put.Item or Key)")
	}
	return nil
}

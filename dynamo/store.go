package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/internal/firstuse"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Client is the part of the DynamoDB API a [Store] uses, with the SDK's own
// method signatures: *dynamodb.Client satisfies it, and so can a test fake.
type Client interface {
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, params *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

var _ Client = (*dynamodb.Client)(nil)

// Store is an [idempotency.Store] backed by a DynamoDB table. Make it with
// [New]. It is safe for concurrent use.
type Store struct {
	client Client
	opts   Options
	table  firstuse.Check // checkTable, before the first Acquire
	// strong: the table is a global table in multi-Region strong
	// consistency, which does not support TransactWriteItems.
	strong atomic.Bool
}

var _ idempotency.Store = (*Store)(nil)

// New returns a Store that keeps records with client in the table
// Options.TableName. A bad option gives a [*idempotency.ConfigError];
// New sends no request. The first Acquire reads the table's description,
// when the client can (a [TableDescriber]), and refuses a global table
// that cannot keep the guarantee (see [Options.AcceptEventualGlobalTable]),
// as each Acquire after does until the description is read and passes.
func New(client Client, optFns ...func(*Options)) (*Store, error) {
	if client == nil {
		return nil, &idempotency.ConfigError{Name: "dynamo.Client", Err: errors.New("nil")}
	}
	o, err := options(optFns)
	if err != nil {
		return nil, err
	}
	return &Store{client: client, opts: o}, nil
}

// errEmptyKey is returned before DynamoDB would refuse an empty key value.
var errEmptyKey = errors.New("dynamo: empty idempotency key")

// Acquire writes rec unless a live record holds its key, with one PutItem
// conditioned on
//
//	attribute_not_exists(#id) OR #expiry <= :now OR
//	(#status = :inprogress AND (attribute_not_exists(#lease) OR #lease <= :nowms))
//
// which is "no live record": a record is live while now < Expiry and, when
// INPROGRESS, now < LeaseEnd. When the condition fails, DynamoDB returns
// the existing item (ALL_OLD). A server that returns none gets a consistent
// GetItem; if the record has gone, or is no longer live, by then, the put is
// tried once more.
func (s *Store) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if rec.Key == "" {
		return nil, errEmptyKey
	}
	if err := s.table.Do(ctx, s.checkTable); err != nil {
		return nil, err
	}
	item := s.opts.encode(rec)
	if size := itemSize(item); size > maxItemSize {
		return nil, errTooLarge("acquire", rec.Key, size)
	}
	in := &dynamodb.PutItemInput{
		TableName: aws.String(s.opts.TableName),
		Item:      item,
		ConditionExpression: aws.String("attribute_not_exists(#id) OR #expiry <= :now OR " +
			"(#status = :inprogress AND (attribute_not_exists(#lease) OR #lease <= :nowms))"),
		ExpressionAttributeNames: map[string]string{
			"#id":     s.opts.KeyAttr,
			"#expiry": s.opts.ExpiryAttr,
			"#status": s.opts.StatusAttr,
			"#lease":  s.opts.LeaseEndAttr,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":        number(now.Unix()),
			":nowms":      number(now.UnixMilli()),
			":inprogress": &types.AttributeValueMemberS{Value: string(idempotency.StatusInProgress)},
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	for attempt := 1; ; attempt++ {
		_, err := s.client.PutItem(ctx, in)
		if err == nil {
			return nil, nil
		}
		old, failed := conditionFailed(err)
		if !failed {
			return nil, requestError("acquire", rec.Key, err)
		}
		if len(old) == 0 {
			if old, err = s.getItem(ctx, rec.Key); err != nil {
				return nil, requestError("acquire", rec.Key, err)
			}
		}
		if len(old) > 0 {
			existing, err := s.opts.decodeIn(ctx, rec.Key, old)
			if err != nil || existing.Live(now) || attempt == 2 {
				return existing, err
			}
		} else if attempt == 2 {
			return nil, fmt.Errorf("dynamo: acquire %q: the conditional put failed twice, and no record was found after either", rec.Key)
		}
		// The record read after the put no longer blocks it: it went, or
		// expired, in between. One more put settles it.
	}
}

// Complete replaces the record with rec, a COMPLETED record, with one
// PutItem conditioned on the lease token (#token = :token). A failed
// condition gives [idempotency.ErrLeaseLost]; a record over 400 KB gives
// [idempotency.ErrRecordTooLarge] without a request.
//
// When the handler staged writes on ctx (see [Stage]), Complete commits
// them with the record in one TransactWriteItems instead; when they are
// not committed, or it cannot tell, it returns an
// [*idempotency.CommitError].
func (s *Store) Complete(ctx context.Context, rec *idempotency.Record) error {
	if writes := s.staged(ctx); len(writes) > 0 {
		return s.commit(ctx, rec, writes)
	}
	return s.replace(ctx, "complete", rec)
}

// MarkUncertain replaces the record with rec, an UNCERTAIN record, with
// one PutItem conditioned on the lease token, as Complete does; the
// handler's staged writes, if any, are not committed.
func (s *Store) MarkUncertain(ctx context.Context, rec *idempotency.Record) error {
	return s.replace(ctx, "mark uncertain", rec)
}

// replace writes rec with one PutItem conditioned on its lease token.
func (s *Store) replace(ctx context.Context, op string, rec *idempotency.Record) error {
	put, err := s.completePut(ctx, rec)
	if err != nil {
		return err
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 put.TableName,
		Item:                      put.Item,
		ConditionExpression:       put.ConditionExpression,
		ExpressionAttributeNames:  put.ExpressionAttributeNames,
		ExpressionAttributeValues: put.ExpressionAttributeValues,
	})
	if err != nil {
		return requestError(op, rec.Key, err)
	}
	return nil
}

// completePut builds the write of a record that replaces the one its
// lease token holds as a [types.Put], the element type of
// TransactWriteItems, so that commit can send the COMPLETED record in the
// same transaction as the handler's staged writes.
func (s *Store) completePut(ctx context.Context, rec *idempotency.Record) (types.Put, error) {
	if rec.Key == "" {
		return types.Put{}, errEmptyKey
	}
	item := s.opts.encode(rec)
	if err := s.opts.typeScriptData(ctx, item, rec); err != nil {
		return types.Put{}, err
	}
	if size := itemSize(item); size > maxItemSize {
		return types.Put{}, errTooLarge("complete", rec.Key, size)
	}
	cond, names, values := s.tokenCondition(rec.LeaseToken)
	return types.Put{
		TableName:                 aws.String(s.opts.TableName),
		Item:                      item,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, nil
}

// tokenCondition is "the stored record carries token". A record written
// without a token (an empty one; Powertools writes none) has no token
// attribute.
func (s *Store) tokenCondition(token string) (string, map[string]string, map[string]types.AttributeValue) {
	names := map[string]string{"#token": s.opts.LeaseTokenAttr}
	if token == "" {
		return "attribute_not_exists(#token)", names, nil
	}
	return "#token = :token", names, map[string]types.AttributeValue{":token": &types.AttributeValueMemberS{Value: token}}
}

// Release deletes the record key when it carries token, with one
// DeleteItem conditioned on attribute_not_exists(#id) OR #token = :token:
// a record already gone is not an error, one with another token gives
// [idempotency.ErrLeaseLost].
func (s *Store) Release(ctx context.Context, key, token string) error {
	if key == "" {
		return errEmptyKey
	}
	cond, names, values := s.tokenCondition(token)
	names["#id"] = s.opts.KeyAttr
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.opts.TableName),
		Key:                       s.opts.key(key),
		ConditionExpression:       aws.String("attribute_not_exists(#id) OR " + cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if err != nil {
		return requestError("release", key, err)
	}
	return nil
}

// Get reads the record key with one consistent GetItem. It returns
// [idempotency.ErrRecordNotFound] when there is none.
func (s *Store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if key == "" {
		return nil, errEmptyKey
	}
	item, err := s.getItem(ctx, key)
	if err != nil {
		return nil, requestError("get", key, err)
	}
	if len(item) == 0 {
		return nil, fmt.Errorf("dynamo: get %q: %w", key, idempotency.ErrRecordNotFound)
	}
	return s.opts.decodeIn(ctx, key, item)
}

// getItem reads the item of key, or nil, with a consistent read: an
// eventually consistent one could miss the record a racing Acquire just
// wrote.
func (s *Store) getItem(ctx context.Context, key string) (map[string]types.AttributeValue, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.opts.TableName),
		Key:            s.opts.key(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

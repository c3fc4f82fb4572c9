package dynamo

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file holds the requests of an operator's tool (cmd/idempotency),
// which the middleware never sends: reading the whole table, and deleting
// a record that a person has looked at. They are here, not in the tool,
// because they read and write the item as the Store does (attribute
// names, composite keys, decoding).

// ScanClient is the request [Store.Scan] sends besides those of [Client];
// *dynamodb.Client has it.
type ScanClient interface {
	Scan(ctx context.Context, params *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ ScanClient = (*dynamodb.Client)(nil)

// Page is what one Scan request of [Store.Scan] read.
type Page struct {
	// Records are the records of the page that decode, in the table's
	// order.
	Records []*idempotency.Record
	// Corrupted has an [*idempotency.CorruptedRecordError] for each item
	// of the page that does not decode.
	Corrupted []error
	// Scanned is how many items the request read, before the status
	// filter: the progress of the scan.
	Scanned int
}

// Scan reads the records of the table, one page (one Scan request) at a
// time, in no particular order, and only those with status when it is not
// empty (a filter that DynamoDB applies after reading, so every item still
// counts against the table's read capacity). In composite mode it reads
// only the records of StaticPartitionKey. Each record is read as [Store.Get]
// reads it, in the record format of ctx's invocation. The reads are eventually
// consistent: act on a record only after a [Store.Get].
//
// The store's client must also be a [ScanClient], as *dynamodb.Client is;
// otherwise the first page is an error. The scan stops at the first error,
// or when the caller stops ranging.
func (s *Store) Scan(ctx context.Context, status idempotency.Status) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		client, ok := s.client.(ScanClient)
		if !ok {
			yield(nil, errors.New("dynamo: scan: the store's client has no Scan method"))
			return
		}
		in := &dynamodb.ScanInput{TableName: aws.String(s.opts.TableName)}
		var filters []string
		names := map[string]string{}
		values := map[string]types.AttributeValue{}
		if status != "" {
			filters = append(filters, "#status = :status")
			names["#status"] = s.opts.StatusAttr
			values[":status"] = &types.AttributeValueMemberS{Value: string(status)}
		}
		if s.opts.SortKeyAttr != "" {
			filters = append(filters, "#pk = :pk")
			names["#pk"] = s.opts.KeyAttr
			values[":pk"] = &types.AttributeValueMemberS{Value: s.opts.StaticPartitionKey}
		}
		if len(filters) > 0 {
			in.FilterExpression = aws.String(strings.Join(filters, " AND "))
			in.ExpressionAttributeNames = names
			in.ExpressionAttributeValues = values
		}
		for {
			out, err := client.Scan(ctx, in)
			if err != nil {
				yield(nil, fmt.Errorf("dynamo: scan %q: %w", s.opts.TableName, err))
				return
			}
			page := &Page{Scanned: int(out.ScannedCount)}
			for _, item := range out.Items {
				rec, err := s.opts.decodeIn(ctx, s.opts.itemKey(item), item)
				if err != nil {
					page.Corrupted = append(page.Corrupted, err)
					continue
				}
				page.Records = append(page.Records, rec)
			}
			if !yield(page, nil) || len(out.LastEvaluatedKey) == 0 {
				return
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
}

// itemKey returns the idempotency key an item holds, or "" when it has
// none, for naming the item in a CorruptedRecordError.
func (o *Options) itemKey(item map[string]types.AttributeValue) string {
	attr := o.KeyAttr
	if o.SortKeyAttr != "" {
		attr = o.SortKeyAttr
	}
	if v, ok := item[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// Delete deletes the record rec.Key if it is still the record rec shows:
// one DeleteItem conditioned on
//
//	#status = :status AND #token = :token
//
// (attribute_not_exists(#token) for a record without a token, as
// Powertools writes them). The lease token is unique to the invocation
// that wrote the record, and the status tells its INPROGRESS record from
// the COMPLETED or UNCERTAIN one it wrote later with the same token: an
// operator who decided to delete an INPROGRESS record does not delete
// the response its invocation stored meanwhile.
//
// Unlike [Store.Release], a record that is missing, or has changed, is not
// deleted and gives [idempotency.ErrLeaseLost]; [Store.Get] tells which.
func (s *Store) Delete(ctx context.Context, rec *idempotency.Record) error {
	if rec.Key == "" {
		return errEmptyKey
	}
	names := map[string]string{"#status": s.opts.StatusAttr, "#token": s.opts.LeaseTokenAttr}
	values := map[string]types.AttributeValue{":status": &types.AttributeValueMemberS{Value: string(rec.Status)}}
	cond := "#status = :status AND attribute_not_exists(#token)"
	if rec.LeaseToken != "" {
		cond = "#status = :status AND #token = :token"
		values[":token"] = &types.AttributeValueMemberS{Value: rec.LeaseToken}
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.opts.TableName),
		Key:                       s.opts.key(rec.Key),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if err != nil {
		return requestError("delete", rec.Key, err)
	}
	return nil
}

// DeleteCorrupted deletes the item at key when it is not a record the
// store can read (one that [Store.Get] answers with an
// [*idempotency.CorruptedRecordError]), which no invocation can take over
// until it expires: for an operator who has looked at it. It reads the
// item with a consistent GetItem, and deletes it with one DeleteItem
// conditioned on its status and lease token attributes being as read
// (present or absent, of the type read), so that a record an invocation
// wrote since is left alone. An item that is gone, or that the store can
// read by then, is not deleted and gives [idempotency.ErrLeaseLost].
func (s *Store) DeleteCorrupted(ctx context.Context, key string) error {
	if key == "" {
		return errEmptyKey
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.opts.TableName), Key: s.opts.key(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return requestError("delete", key, err)
	}
	if len(out.Item) == 0 {
		return fmt.Errorf("dynamo: delete %q: the item is gone: %w", key, idempotency.ErrLeaseLost)
	}
	if _, err := s.opts.decode(key, out.Item); err == nil {
		return fmt.Errorf("dynamo: delete %q: the item is a record the store reads: %w", key, idempotency.ErrLeaseLost)
	}
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	var conds []string
	for i, attr := range []string{s.opts.StatusAttr, s.opts.LeaseTokenAttr} {
		name, value := fmt.Sprintf("#a%d", i), fmt.Sprintf(":v%d", i)
		names[name] = attr
		switch v := out.Item[attr].(type) {
		case nil:
			conds = append(conds, "attribute_not_exists("+name+")")
		case *types.AttributeValueMemberS, *types.AttributeValueMemberN, *types.AttributeValueMemberB, *types.AttributeValueMemberBOOL:
			conds = append(conds, name+" = "+value)
			values[value] = v
		default:
			conds = append(conds, "attribute_type("+name+", "+value+")")
			values[value] = &types.AttributeValueMemberS{Value: typeName(v)}
		}
	}
	in := &dynamodb.DeleteItemInput{
		TableName:                aws.String(s.opts.TableName),
		Key:                      s.opts.key(key),
		ConditionExpression:      aws.String(strings.Join(conds, " AND ")),
		ExpressionAttributeNames: names,
	}
	if len(values) > 0 {
		in.ExpressionAttributeValues = values
	}
	if _, err := s.client.DeleteItem(ctx, in); err != nil {
		return requestError("delete", key, err)
	}
	return nil
}

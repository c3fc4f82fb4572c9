package dynamo

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/internal/itemsize"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// maxItemSize is DynamoDB's item size limit.
const maxItemSize = itemsize.Max

// key returns the primary key of the record key.
func (o *Options) key(key string) map[string]types.AttributeValue {
	if o.SortKeyAttr == "" {
		return map[string]types.AttributeValue{o.KeyAttr: &types.AttributeValueMemberS{Value: key}}
	}
	return map[string]types.AttributeValue{
		o.KeyAttr:     &types.AttributeValueMemberS{Value: o.StaticPartitionKey},
		o.SortKeyAttr: &types.AttributeValueMemberS{Value: key},
	}
}

// encode returns the item for rec. Zero times, an empty token, hash or
// response, and a false ResponseOmitted are left out: decode reads an
// absent attribute as the zero value, so the round trip is exact, and an
// absent expiry or lease end is what the Acquire condition expects of a
// record without one.
func (o *Options) encode(rec *idempotency.Record) map[string]types.AttributeValue {
	item := o.key(rec.Key)
	item[o.StatusAttr] = &types.AttributeValueMemberS{Value: string(rec.Status)}
	if !rec.Expiry.IsZero() {
		item[o.ExpiryAttr] = number(rec.Expiry.Unix())
	}
	if !rec.LeaseEnd.IsZero() {
		item[o.LeaseEndAttr] = number(rec.LeaseEnd.UnixMilli())
	}
	if rec.LeaseToken != "" {
		item[o.LeaseTokenAttr] = &types.AttributeValueMemberS{Value: rec.LeaseToken}
	}
	if rec.PayloadHash != "" {
		item[o.ValidationAttr] = &types.AttributeValueMemberS{Value: rec.PayloadHash}
	}
	switch {
	case len(rec.Response) == 0:
	case utf8.Valid(rec.Response):
		// JSON is always UTF-8: stored as text, the way Powertools stores it,
		// and readable in the console.
		item[o.DataAttr] = &types.AttributeValueMemberS{Value: string(rec.Response)}
	default:
		// An S attribute would not keep invalid UTF-8.
		item[o.DataAttr] = &types.AttributeValueMemberB{Value: rec.Response}
	}
	if rec.ResponseOmitted {
		item[o.ResponseOmittedAttr] = &types.AttributeValueMemberBOOL{Value: true}
	}
	if rec.ResponseOmittedReason != "" {
		item[o.ResponseOmittedReasonAttr] = &types.AttributeValueMemberS{Value: rec.ResponseOmittedReason}
	}
	if !rec.CompletedAt.IsZero() {
		item[o.CompletedAtAttr] = number(rec.CompletedAt.UnixMilli())
	}
	if !rec.Deadline.IsZero() {
		item[o.DeadlineAttr] = number(rec.Deadline.UnixMilli())
	}
	return item
}

func number(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// decode reads the item of the record key. An item it cannot read gives a
// [*idempotency.CorruptedRecordError]: the caller must not act on a record
// whose state it does not know.
func (o *Options) decode(key string, item map[string]types.AttributeValue) (*idempotency.Record, error) {
	corrupted := func(format string, args ...any) error {
		return &idempotency.CorruptedRecordError{Key: key, Reason: fmt.Sprintf(format, args...)}
	}
	keyAttr := o.KeyAttr
	if o.SortKeyAttr != "" {
		keyAttr = o.SortKeyAttr
	}
	var rec idempotency.Record
	var err error
	if rec.Key, err = str(item, keyAttr, true); err != nil {
		return nil, corrupted("%v", err)
	}
	status, err := str(item, o.StatusAttr, true)
	if err != nil {
		return nil, corrupted("%v", err)
	}
	switch rec.Status = idempotency.Status(status); rec.Status {
	case idempotency.StatusInProgress, idempotency.StatusComplete, idempotency.StatusUncertain:
	default:
		return nil, corrupted("unknown status %q in attribute %q", status, o.StatusAttr)
	}
	if rec.Expiry, err = epoch(item, o.ExpiryAttr, seconds); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.LeaseEnd, err = epoch(item, o.LeaseEndAttr, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.CompletedAt, err = epoch(item, o.CompletedAtAttr, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.Deadline, err = epoch(item, o.DeadlineAttr, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.LeaseToken, err = str(item, o.LeaseTokenAttr, false); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.PayloadHash, err = str(item, o.ValidationAttr, false); err != nil {
		return nil, corrupted("%v", err)
	}
	switch v := item[o.DataAttr].(type) {
	case nil:
	case *types.AttributeValueMemberS:
		rec.Response = []byte(v.Value)
	case *types.AttributeValueMemberB:
		rec.Response = v.Value
	default:
		return nil, corrupted("attribute %q is %s, want S or B", o.DataAttr, typeName(v))
	}
	if len(rec.Response) == 0 {
		rec.Response = nil
	}
	switch v := item[o.ResponseOmittedAttr].(type) {
	case nil:
	case *types.AttributeValueMemberBOOL:
		rec.ResponseOmitted = v.Value
	default:
		return nil, corrupted("attribute %q is %s, want BOOL", o.ResponseOmittedAttr, typeName(v))
	}
	if rec.ResponseOmittedReason, err = str(item, o.ResponseOmittedReasonAttr, false); err != nil {
		return nil, err
	}
	return &rec, nil
}

// str reads the S attribute name; absent is "" unless required.
func str(item map[string]types.AttributeValue, name string, required bool) (string, error) {
	switch v := item[name].(type) {
	case *types.AttributeValueMemberS:
		return v.Value, nil
	case nil:
		if required {
			return "", fmt.Errorf("attribute %q is missing", name)
		}
		return "", nil
	default:
		return "", fmt.Errorf("attribute %q is %s, want S", name, typeName(v))
	}
}

// epoch reads the N attribute name as a whole number of seconds or
// milliseconds, which at converts; absent is the zero time.
func epoch(item map[string]types.AttributeValue, name string, at func(int64) time.Time) (time.Time, error) {
	switch v := item[name].(type) {
	case nil:
		return time.Time{}, nil
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("attribute %q is %q, want a whole number", name, v.Value)
		}
		return at(n).UTC(), nil
	default:
		return time.Time{}, fmt.Errorf("attribute %q is %s, want N", name, typeName(v))
	}
}

func seconds(s int64) time.Time { return time.Unix(s, 0) }

// typeName names an attribute value's DynamoDB type for error messages.
func typeName(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberM:
		return "M"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	}
	return fmt.Sprintf("%T", v)
}

// itemSize returns an upper bound of the size DynamoDB counts for item, or
// for any map of attributes (a key, an expression's values), as package
// internal/itemsize counts it.
func itemSize(item map[string]types.AttributeValue) int {
	size := 0
	for name, v := range item {
		size += len(name) + valueSize(v)
	}
	return size
}

// valueSize is the size of an attribute's value, as itemSize counts it.
func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return itemsize.Number(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return itemsize.Scalar
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += itemsize.Number(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL: // a response kept as Powertools TypeScript keeps it
		n := itemsize.Nested(len(v.Value))
		for _, e := range v.Value {
			n += valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return itemsize.Nested(len(v.Value)) + itemSize(v.Value)
	}
	return 0
}

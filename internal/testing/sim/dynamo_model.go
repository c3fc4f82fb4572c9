package sim

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is DynamoDB's data plane as the model keeps it: a replica's
// tables, and the requests dynamo.Store sends, with DynamoDB's documented
// semantics (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/):
//
//   - PutItem, DeleteItem: a condition evaluated on the item as it is,
//     atomically with the write; ReturnValuesOnConditionCheckFailure
//     ALL_OLD returns the item with ConditionalCheckFailedException.
//   - GetItem with ConsistentRead: the item as the last write left it.
//   - TransactWriteItems: every condition checked, then every write made,
//     or none; TransactionCanceledException with one reason per item, in
//     order ("None" for those that did not fail). Its ClientRequestToken
//     (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html)
//     makes it idempotent: while a transaction with the token is still
//     being applied, another request with it gets
//     TransactionInProgressException; for 10 minutes after it completed,
//     the same request with the same token succeeds again without being
//     applied again, and another request with it gets
//     IdempotentParameterMismatchException. (The page says what a repeat
//     of a successful transaction does; a cancelled one changed nothing,
//     and the model evaluates its repeat anew.)
//   - Items of at most 400 KB
//     (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items),
//     counted as CapacityUnitCalculations.html does.
//   - Time to live: an expired item is still read and written until a
//     background sweep deletes it, "typically within a few days"
//     (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html);
//     the sweep is scheduled at the expiry plus up to 48 hours.
//
// Anything else the store could send (an update expression, an eventually
// consistent read, ReturnValues) is refused loudly: see cond.

// The tables of the simulation: the idempotency records, and the
// handler's effects when it stages them with the record.
const (
	recordsTable = "sim-idempotency"
	effectsTable = "sim-effects"
	keyAttr      = "id"
	maxItem      = 400 * 1024
)

// ditem is an item, and the internal timestamp of its last write (what a
// global table's last writer wins by).
type ditem struct {
	attrs map[string]types.AttributeValue // nil: deleted (a tombstone, kept for its stamp)
	stamp time.Time
}

// database is one replica's tables.
type database struct {
	tables map[string]map[string]*ditem
	// tokens are the ClientRequestTokens of the transactions applied, or
	// being applied.
	tokens map[string]*txToken
}

// txToken is what the server keeps of a transaction's ClientRequestToken.
type txToken struct {
	request string    // what the request asked: a repeat must ask the same
	done    time.Time // when the transaction completes (its answer leaves)
	ok      bool      // it succeeded: a repeat in the window succeeds too
}

// tokenWindow is how long after a transaction completed its token makes a
// repeat of it idempotent.
const tokenWindow = 10 * time.Minute

// transactWithToken is TransactWriteItems at now, applied by the server
// in d (its answer leaves then), with its ClientRequestToken's rules.
func (db *database) transactWithToken(in *dynamodb.TransactWriteItemsInput, now time.Time, d time.Duration) ([]change, error) {
	tok := aws.ToString(in.ClientRequestToken)
	if tok == "" {
		return db.transactWriteItems(in, now)
	}
	request := fingerprint(in)
	if t := db.tokens[tok]; t != nil && now.Before(t.done.Add(tokenWindow)) {
		switch {
		case t.request != request:
			return nil, &types.IdempotentParameterMismatchException{Message: aws.String("Request parameters do not match the ones of the original request with this client token")}
		case now.Before(t.done):
			return nil, &types.TransactionInProgressException{Message: aws.String("Transaction is ongoing for the given client request token")}
		case t.ok:
			return nil, nil // applied once: the same answer, nothing applied again
		}
	}
	changes, err := db.transactWriteItems(in, now)
	if db.tokens == nil {
		db.tokens = map[string]*txToken{}
	}
	db.tokens[tok] = &txToken{request: request, done: now.Add(d), ok: err == nil}
	return changes, err
}

// fingerprint is what a TransactWriteItems request asks, for telling a
// repeat of it from another request with the same token.
func fingerprint(in *dynamodb.TransactWriteItemsInput) string {
	var b []byte
	for _, ti := range in.TransactItems {
		if p := ti.Put; p != nil {
			b = append(b, aws.ToString(p.TableName)...)
			b = append(b, 0)
			if k, err := itemKey(map[string]types.AttributeValue{keyAttr: p.Item[keyAttr]}); err == nil {
				b = append(b, k...)
			}
			b = append(b, 0)
			b = append(b, aws.ToString(p.ConditionExpression)...)
			b = strconv.AppendInt(append(b, 0), int64(itemSize(p.Item)), 10)
			b = append(b, 0)
		}
	}
	return string(b)
}

// newDatabase returns a replica with the tables names, each keyed on the
// S attribute "id".
func newDatabase(names ...string) *database {
	db := &database{tables: map[string]map[string]*ditem{}}
	for _, n := range names {
		db.tables[n] = map[string]*ditem{}
	}
	return db
}

// change is one item a request changed: what a checker is told of, and
// what a global table replicates.
type change struct {
	table         string
	key           string
	before, after map[string]types.AttributeValue
	stamp         time.Time
}

// errUnknown marks a request the model does not know: the simulation
// reports it as its own failure, never as DynamoDB's answer.
var errUnknown = errors.New("sim: a request the DynamoDB model does not know")

func validation(format string, args ...any) error {
	return &smithy.GenericAPIError{Code: "ValidationException", Message: fmt.Sprintf(format, args...)}
}

func (db *database) table(name *string) (map[string]*ditem, error) {
	t, ok := db.tables[aws.ToString(name)]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	return t, nil
}

func itemKey(key map[string]types.AttributeValue) (string, error) {
	if len(key) != 1 {
		return "", validation("The provided key element does not match the schema")
	}
	s, ok := key[keyAttr].(*types.AttributeValueMemberS)
	if !ok || s.Value == "" {
		return "", validation("The provided key element does not match the schema")
	}
	return s.Value, nil
}

// current returns the live attributes of k, or nil.
func current(t map[string]*ditem, k string) map[string]types.AttributeValue {
	if it := t[k]; it != nil {
		return it.attrs
	}
	return nil
}

// condition evaluates a request's condition on item; ok is false when it
// fails; err when the request is invalid.
func condition(expr *string, names map[string]string, values map[string]types.AttributeValue, item map[string]types.AttributeValue) (ok bool, err error) {
	if expr == nil {
		if len(names) > 0 || len(values) > 0 {
			return false, validation("ExpressionAttributeNames and ExpressionAttributeValues can only be specified when using expressions")
		}
		return true, nil
	}
	pc := parseCondition(*expr)
	if pc.err != nil {
		return false, fmt.Errorf("%w: %v", errUnknown, pc.err)
	}
	if err := checkPlaceholders(pc, names, values); err != nil {
		return false, validation("%v", err)
	}
	return pc.c.eval(item, names, values), nil
}

// conditionFailed is the error of a PutItem or DeleteItem whose condition
// failed on old, the item as it was, which it holds with ALL_OLD.
func conditionFailed(old map[string]types.AttributeValue, ret types.ReturnValuesOnConditionCheckFailure) error {
	e := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	if ret == types.ReturnValuesOnConditionCheckFailureAllOld {
		e.Item = old
	}
	return e
}

func (db *database) putItem(in *dynamodb.PutItemInput, now time.Time) ([]change, error) {
	if in.ReturnValues != "" && in.ReturnValues != types.ReturnValueNone {
		return nil, fmt.Errorf("%w: PutItem ReturnValues %s", errUnknown, in.ReturnValues)
	}
	t, err := db.table(in.TableName)
	if err != nil {
		return nil, err
	}
	k, err := itemKey(map[string]types.AttributeValue{keyAttr: in.Item[keyAttr]})
	if err != nil {
		return nil, err
	}
	if size := itemSize(in.Item); size > maxItem {
		return nil, validation("Item size has exceeded the maximum allowed size")
	}
	old := current(t, k)
	ok, err := condition(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, conditionFailed(old, in.ReturnValuesOnConditionCheckFailure)
	}
	item := maps.Clone(in.Item)
	t[k] = &ditem{attrs: item, stamp: now}
	return []change{{table: aws.ToString(in.TableName), key: k, before: old, after: item, stamp: now}}, nil
}

func (db *database) deleteItem(in *dynamodb.DeleteItemInput, now time.Time) ([]change, error) {
	if in.ReturnValues != "" && in.ReturnValues != types.ReturnValueNone {
		return nil, fmt.Errorf("%w: DeleteItem ReturnValues %s", errUnknown, in.ReturnValues)
	}
	t, err := db.table(in.TableName)
	if err != nil {
		return nil, err
	}
	k, err := itemKey(in.Key)
	if err != nil {
		return nil, err
	}
	old := current(t, k)
	ok, err := condition(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, conditionFailed(old, in.ReturnValuesOnConditionCheckFailure)
	}
	if old == nil {
		return nil, nil
	}
	t[k] = &ditem{stamp: now}
	return []change{{table: aws.ToString(in.TableName), key: k, before: old, stamp: now}}, nil
}

func (db *database) getItem(in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
	if !aws.ToBool(in.ConsistentRead) {
		return nil, fmt.Errorf("%w: an eventually consistent GetItem", errUnknown)
	}
	if in.ProjectionExpression != nil {
		return nil, fmt.Errorf("%w: GetItem ProjectionExpression", errUnknown)
	}
	t, err := db.table(in.TableName)
	if err != nil {
		return nil, err
	}
	k, err := itemKey(in.Key)
	if err != nil {
		return nil, err
	}
	return &dynamodb.GetItemOutput{Item: maps.Clone(current(t, k))}, nil
}

func (db *database) transactWriteItems(in *dynamodb.TransactWriteItemsInput, now time.Time) ([]change, error) {
	n := len(in.TransactItems)
	if n == 0 || n > 100 {
		return nil, validation("1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and 100")
	}
	type write struct {
		t    map[string]*ditem
		name string
		k    string
		put  *types.Put
	}
	writes := make([]write, n)
	seen := map[string]bool{}
	for i, ti := range in.TransactItems {
		if ti.Put == nil || ti.Update != nil || ti.Delete != nil || ti.ConditionCheck != nil {
			return nil, fmt.Errorf("%w: a transaction item other than a Put", errUnknown)
		}
		p := ti.Put
		t, err := db.table(p.TableName)
		if err != nil {
			return nil, err
		}
		k, err := itemKey(map[string]types.AttributeValue{keyAttr: p.Item[keyAttr]})
		if err != nil {
			return nil, err
		}
		id := aws.ToString(p.TableName) + "\x00" + k
		if seen[id] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[id] = true
		writes[i] = write{t: t, name: aws.ToString(p.TableName), k: k, put: p}
	}
	reasons := make([]types.CancellationReason, n)
	failed := false
	for i, wr := range writes {
		reasons[i] = types.CancellationReason{Code: aws.String("None")}
		if itemSize(wr.put.Item) > maxItem {
			reasons[i] = types.CancellationReason{Code: aws.String("ValidationError"), Message: aws.String("Item size has exceeded the maximum allowed size")}
			failed = true
			continue
		}
		old := current(wr.t, wr.k)
		ok, err := condition(wr.put.ConditionExpression, wr.put.ExpressionAttributeNames, wr.put.ExpressionAttributeValues, old)
		if err != nil {
			return nil, err
		}
		if !ok {
			reasons[i] = types.CancellationReason{Code: aws.String("ConditionalCheckFailed"), Message: aws.String("The conditional request failed")}
			if wr.put.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld {
				reasons[i].Item = old
			}
			failed = true
		}
	}
	if failed {
		codes := ""
		for i, r := range reasons {
			if i > 0 {
				codes += ", "
			}
			codes += aws.ToString(r.Code)
		}
		return nil, &types.TransactionCanceledException{
			Message:             aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [" + codes + "]"),
			CancellationReasons: reasons,
		}
	}
	changes := make([]change, n)
	for i, wr := range writes {
		old := current(wr.t, wr.k)
		item := maps.Clone(wr.put.Item)
		wr.t[wr.k] = &ditem{attrs: item, stamp: now}
		changes[i] = change{table: wr.name, key: wr.k, before: old, after: item, stamp: now}
	}
	return changes, nil
}

// itemSize is the size DynamoDB counts for an item
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
// each name's UTF-8 bytes and its value's: a string's UTF-8 bytes, a
// binary's bytes, a number one byte per two significant digits and one
// more, a boolean or null one byte, a map or list three bytes and one per
// element besides its elements.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		digits := 0
		for _, c := range v.Value {
			if c >= '0' && c <= '9' {
				digits++
			}
		}
		return (digits+1)/2 + 1
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	}
	return 0
}

// recordOf reads an idempotency item as the checker sees it, by the
// default attribute names of dynamo.Options (the simulator's).
func recordOf(item map[string]types.AttributeValue) *recView {
	if item == nil {
		return nil
	}
	s := func(name string) string {
		if v, ok := item[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	n := func(name string) int64 {
		if v, ok := item[name].(*types.AttributeValueMemberN); ok {
			x, _ := strconv.ParseInt(v.Value, 10, 64)
			return x
		}
		return 0
	}
	ms := func(name string) time.Time {
		if x := n(name); x != 0 {
			return time.UnixMilli(x).UTC()
		}
		return time.Time{}
	}
	r := &recView{status: idempotency.Status(s("status")), token: s("lease_token"), leaseEnd: ms("in_progress_expiration"), deadline: ms("invocation_deadline"), hash: s("validation")}
	if x := n("expiration"); x != 0 {
		r.expiry = time.Unix(x, 0).UTC()
	}
	switch v := item["data"].(type) {
	case *types.AttributeValueMemberS:
		r.response = []byte(v.Value)
	case *types.AttributeValueMemberB:
		r.response = v.Value
	}
	if v, ok := item["response_omitted"].(*types.AttributeValueMemberBOOL); ok {
		r.omitted = v.Value
	}
	return r
}

package dynamo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB's limits on one TransactWriteItems; see
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-dynamodb-transactions
const (
	maxTransactItems = 100
	maxTransactSize  = 4 * 1024 * 1024
)

// The limits a [*TransactionLimitError] names.
const (
	LimitItems    = "items per transaction"
	LimitSize     = "total size of a transaction"
	LimitSameItem = "one write per item in a transaction"
)

// checkTransaction checks writes, plus reserved writes still to come,
// against DynamoDB's limits: at most 100 writes, 4 MB in all, and no item
// written twice. The size is an estimate from above (see writeSize). Two
// writes to one item are found when both name their key: Update, Delete
// and ConditionCheck always do, a Put only on the idempotency table, whose
// key schema the Store knows; DynamoDB refuses the others itself, and
// [Store.Complete] reports that as a [*TransactionError].
func (s *Store) checkTransaction(writes []types.TransactWriteItem, reserved int) error {
	if n := len(writes) + reserved; n > maxTransactItems {
		return &TransactionLimitError{Limit: LimitItems, Got: n, Max: maxTransactItems, Index: -1}
	}
	size := 0
	seen := make(map[string]int, len(writes))
	for i, w := range writes {
		size += writeSize(w)
		id, ok := s.itemIdentity(w)
		if !ok {
			continue
		}
		if j, dup := seen[id]; dup {
			return &TransactionLimitError{Limit: LimitSameItem, Got: 2, Max: 1, Index: i, Other: j}
		}
		seen[id] = i
	}
	if size > maxTransactSize {
		return &TransactionLimitError{Limit: LimitSize, Got: size, Max: maxTransactSize, Index: -1}
	}
	return nil
}

// itemIdentity names the item w writes: its table and its key, when known.
func (s *Store) itemIdentity(w types.TransactWriteItem) (string, bool) {
	var table string
	var key map[string]types.AttributeValue
	switch {
	case w.Put != nil:
		table = aws.ToString(w.Put.TableName)
		if table != s.opts.TableName {
			return "", false
		}
		key = map[string]types.AttributeValue{s.opts.KeyAttr: w.Put.Item[s.opts.KeyAttr]}
		if s.opts.SortKeyAttr != "" {
			key[s.opts.SortKeyAttr] = w.Put.Item[s.opts.SortKeyAttr]
		}
	case w.Update != nil:
		table, key = aws.ToString(w.Update.TableName), w.Update.Key
	case w.Delete != nil:
		table, key = aws.ToString(w.Delete.TableName), w.Delete.Key
	case w.ConditionCheck != nil:
		table, key = aws.ToString(w.ConditionCheck.TableName), w.ConditionCheck.Key
	default:
		return "", false
	}
	names := make([]string, 0, len(key))
	for name := range key {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(table)
	for _, name := range names {
		var v string
		switch a := key[name].(type) {
		case *types.AttributeValueMemberS:
			v = "S" + a.Value
		case *types.AttributeValueMemberN:
			v = "N" + a.Value
		case *types.AttributeValueMemberB:
			v = "B" + string(a.Value)
		default:
			// Not a valid key: DynamoDB will say so.
			return "", false
		}
		fmt.Fprintf(&b, "\x00%s\x00%q", name, v)
	}
	return b.String(), true
}

// writeSize estimates from above what w adds to a transaction: its item or
// key, its expressions and their values.
func writeSize(w types.TransactWriteItem) int {
	size := 0
	expr := func(e *string, names map[string]string, values map[string]types.AttributeValue) {
		size += len(aws.ToString(e)) + itemSize(values)
		for k, v := range names {
			size += len(k) + len(v)
		}
	}
	switch {
	case w.Put != nil:
		size += itemSize(w.Put.Item)
		expr(w.Put.ConditionExpression, w.Put.ExpressionAttributeNames, w.Put.ExpressionAttributeValues)
	case w.Update != nil:
		size += itemSize(w.Update.Key) + len(aws.ToString(w.Update.UpdateExpression))
		expr(w.Update.ConditionExpression, w.Update.ExpressionAttributeNames, w.Update.ExpressionAttributeValues)
	case w.Delete != nil:
		size += itemSize(w.Delete.Key)
		expr(w.Delete.ConditionExpression, w.Delete.ExpressionAttributeNames, w.Delete.ExpressionAttributeValues)
	case w.ConditionCheck != nil:
		size += itemSize(w.ConditionCheck.Key)
		expr(w.ConditionCheck.ConditionExpression, w.ConditionCheck.ExpressionAttributeNames, w.ConditionCheck.ExpressionAttributeValues)
	}
	return size
}

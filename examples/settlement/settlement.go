package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Settlement is the detail of a settlement event: pay AmountCents in
// Currency to AccountID, once per SettlementID.
type Settlement struct {
	SettlementID string `json:"settlement_id"`
	AccountID    string `json:"account_id"`
	AmountCents  int64  `json:"amount_cents"`
	Currency     string `json:"currency"`
}

// Receipt is the function's response, stored as the idempotency record's
// response and replayed to every duplicate.
type Receipt struct {
	SettlementID string    `json:"settlement_id"`
	AccountID    string    `json:"account_id"`
	AmountCents  int64     `json:"amount_cents"`
	Currency     string    `json:"currency"`
	SettledAt    time.Time `json:"settled_at"`
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// InvalidSettlementError is a settlement event that cannot be paid as it
// is: retrying it cannot help. Lambda reports it as its errorType,
// InvalidSettlementError, by which an operator finds these failures among
// the others.
type InvalidSettlementError struct {
	Reason string
}

func (e *InvalidSettlementError) Error() string { return "settlement: invalid event: " + e.Reason }

// parseSettlement reads and checks an event's detail.
func parseSettlement(detail json.RawMessage) (Settlement, error) {
	var s Settlement
	if err := json.Unmarshal(detail, &s); err != nil {
		return s, &InvalidSettlementError{Reason: "detail: " + err.Error()}
	}
	switch {
	case s.SettlementID == "":
		return s, &InvalidSettlementError{Reason: "no settlement_id"}
	case s.AccountID == "":
		return s, &InvalidSettlementError{Reason: "no account_id"}
	case s.AmountCents <= 0:
		return s, &InvalidSettlementError{Reason: fmt.Sprintf("amount_cents %d is not positive", s.AmountCents)}
	case !currencyCode.MatchString(s.Currency):
		return s, &InvalidSettlementError{Reason: fmt.Sprintf("currency %q is not an ISO 4217 code", s.Currency)}
	}
	return s, nil
}

// movement is the ledger write of s: a put conditioned on no movement for
// the settlement yet. The condition is a second guard: the idempotency
// record already keeps a settlement from being paid twice, but a movement
// written some other way (a manual correction, another function) must not
// be doubled either.
func movement(ledger string, s Settlement, at time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(ledger),
		Item: map[string]types.AttributeValue{
			"settlement_id": &types.AttributeValueMemberS{Value: s.SettlementID},
			"account_id":    &types.AttributeValueMemberS{Value: s.AccountID},
			"amount_cents":  &types.AttributeValueMemberN{Value: strconv.FormatInt(s.AmountCents, 10)},
			"currency":      &types.AttributeValueMemberS{Value: s.Currency},
			"settled_at":    &types.AttributeValueMemberS{Value: at.UTC().Format(time.RFC3339Nano)},
		},
		ConditionExpression:      aws.String("attribute_not_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": "settlement_id"},
	}}
}

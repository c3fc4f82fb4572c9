package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Key paths into the EventBridge event: the settlement id is the key, and
// a redelivery must carry the same account and amount.
const (
	eventKeyPath   = "detail.settlement_id"
	validationPath = "detail.[account_id,amount_cents,currency]"
)

// App is the settlement function.
type App struct {
	settle *idempotency.Handler
	ledger string
	log    *slog.Logger
	now    func() time.Time
}

// NewApp returns the function, its idempotent part built on store, staging
// movements into the table ledger.
func NewApp(store idempotency.Store, ledger string, log *slog.Logger, opts ...idempotency.Option) (*App, error) {
	a := &App{ledger: ledger, log: log, now: time.Now}
	settle, err := idempotency.New(store, a.settleOnce, opts...)
	if err != nil {
		return nil, err
	}
	a.settle = settle
	return a, nil
}

// ConflictError is returned for a settlement id delivered again with
// another account, amount or currency: not a retry but a different payout
// reusing an id, which someone must investigate. Nothing is paid.
type ConflictError struct {
	SettlementID string
	StoredHash   string // hash of the account, amount and currency paid
	EventHash    string // hash of this event's
	Err          error  // the *idempotency.PayloadConflictError
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("settlement %s was already paid with another account, amount or currency (stored hash %s, event hash %s)", e.SettlementID, e.StoredHash, e.EventHash)
}

func (e *ConflictError) Unwrap() error { return e.Err }

// Handle pays one settlement event. The event is checked first, so that an
// invalid one leaves no record: fixing it and sending it again must not
// meet a stored failure.
func (a *App) Handle(ctx context.Context, event events.EventBridgeEvent) (Receipt, error) {
	s, err := parseSettlement(event.Detail)
	if err != nil {
		a.log.ErrorContext(ctx, "settlement: invalid event", "id", event.ID, "err", err)
		return Receipt{}, err
	}
	raw, err := json.Marshal(event)
	if err != nil {
		return Receipt{}, err
	}
	out, err := a.settle.Invoke(ctx, raw)
	var conflict *idempotency.PayloadConflictError
	switch {
	case err == nil:
		var r Receipt
		err := json.Unmarshal(out, &r)
		return r, err
	case errors.As(err, &conflict):
		a.log.ErrorContext(ctx, "settlement: conflict: the settlement id was already paid with another account, amount or currency",
			"settlement_id", s.SettlementID, "stored_hash", conflict.StoredHash, "event_hash", conflict.EventHash)
		return Receipt{}, &ConflictError{SettlementID: s.SettlementID, StoredHash: conflict.StoredHash, EventHash: conflict.EventHash, Err: err}
	default:
		// In progress elsewhere, a refused movement, a store failure:
		// Lambda reports the error and EventBridge delivers again.
		a.log.ErrorContext(ctx, "settlement: not settled", "settlement_id", s.SettlementID, "err", err)
		return Receipt{}, err
	}
}

// settleOnce is the idempotent part: it stages the ledger movement, which
// the middleware commits with the receipt.
func (a *App) settleOnce(ctx context.Context, event events.EventBridgeEvent) (Receipt, error) {
	s, err := parseSettlement(event.Detail)
	if err != nil {
		return Receipt{}, err
	}
	at := a.now()
	if err := dynamo.Stage(ctx, movement(a.ledger, s, at)); err != nil {
		return Receipt{}, err
	}
	a.log.InfoContext(ctx, "settlement: movement staged", "settlement_id", s.SettlementID, "account_id", s.AccountID, "amount_cents", s.AmountCents)
	return Receipt{SettlementID: s.SettlementID, AccountID: s.AccountID, AmountCents: s.AmountCents, Currency: s.Currency, SettledAt: at.UTC()}, nil
}

package golden

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"testing/cryptotest"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// At is the clock of every golden record: the time its invocation starts
// and ends, in the past so that no real clock ever reaches it again. Its
// milliseconds show whether a time is stored in seconds or milliseconds.
var At = time.Date(2025, time.June, 1, 12, 0, 0, 123_000_000, time.UTC)

// Lease is how long a golden invocation holds its key: its lease ends
// at At+Lease. The invocations have no deadline, which a store bounds its
// requests by on the real clock (a deadline at the golden clock has long
// passed), so the lease is WithLease's.
const Lease = 30 * time.Second

// Seed makes the lease token of the next invocation of t, and whatever
// else draws on crypto/rand, the same on every run. A test calls it right
// before each golden invocation, so that neither another record nor a
// client that draws for its own needs (the SDK's request ids) moves the
// token. The test must not be parallel.
func Seed(t *testing.T) { cryptotest.SetGlobalRandom(t, 1) }

// Func is a handler of the golden invocations.
type Func = func(ctx context.Context, in json.RawMessage) (json.RawMessage, error)

// Invoke runs event through an idempotent handler on store at the golden
// clock, with a lease of Lease, and returns what the caller gets and
// whether fn ran.
func Invoke(store idempotency.Store, event string, fn Func, opts ...idempotency.Option) (resp []byte, ran bool, err error) {
	h := idempotency.Wrap(store, func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		ran = true
		return fn(ctx, in)
	}, append([]idempotency.Option{
		idempotency.WithClock(func() time.Time { return At }),
		idempotency.WithLease(Lease),
		// Quiet: every invocation warns that it has no deadline.
		idempotency.WithLogger(slog.New(slog.DiscardHandler)),
	}, opts...)...)
	resp, err = h.Invoke(context.Background(), []byte(event))
	return resp, ran, err
}

// Ran is the response of the handler of a duplicate, which must not run.
const Ran = `{"ran":"the handler"}`

// Duplicate runs event as a duplicate of a golden record, with a handler
// that answers Ran, and returns what it got in the words of Outcome; a
// replay says too when the observer is told the response was stored.
func Duplicate(store idempotency.Store, event string, opts ...idempotency.Option) string {
	var completedAt time.Time
	observe := idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { completedAt = o.CompletedAt })
	resp, ran, err := Invoke(store, event, func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(Ran), nil
	}, append(opts, observe)...)
	if err == nil && !ran {
		return "replay completed_at=" + stamp(completedAt) + " " + string(resp)
	}
	return Outcome(resp, ran, err)
}

// Outcome says what an invocation got, with the fields of its error that
// a caller acts on: "replay <bytes>", "ran", or the error's type and
// fields, such as "InProgressError lease_end=2025-06-01T12:00:30.123Z".
func Outcome(resp []byte, ran bool, err error) string {
	var (
		inProgress *idempotency.InProgressError
		conflict   *idempotency.PayloadConflictError
		uncertain  *idempotency.UncertainError
		notStored  *idempotency.ResponseNotStoredError
		abandoned  *idempotency.AbandonedError
		corrupted  *idempotency.CorruptedRecordError
	)
	var s string
	switch {
	case err == nil && ran:
		s = "ran"
	case err == nil:
		s = "replay " + string(resp)
	case errors.As(err, &inProgress):
		s = "InProgressError lease_end=" + stamp(inProgress.LeaseEnd)
	case errors.As(err, &conflict):
		s = fmt.Sprintf("PayloadConflictError stored_hash=%s", conflict.StoredHash)
	case errors.As(err, &uncertain):
		s = "UncertainError lease_end=" + stamp(uncertain.LeaseEnd)
	case errors.As(err, &notStored):
		s = fmt.Sprintf("ResponseNotStoredError reason=%q", notStored.Reason)
	case errors.As(err, &abandoned):
		s = "AbandonedError deadline=" + stamp(abandoned.Deadline) + " expiry=" + stamp(abandoned.Expiry)
	case errors.As(err, &corrupted):
		s = "CorruptedRecordError: " + corrupted.Reason
	default:
		s = fmt.Sprintf("%T: %v", err, err)
	}
	if ran && err != nil {
		s += " (the handler ran)"
	}
	return s
}

// stamp is t as Outcome writes it; "-" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Order is the event of an order: its id is the key, its amount and
// currency the validated payload, and its customer has text that JSON
// may escape.
func Order(id string, amount float64) string {
	return fmt.Sprintf(`{"order_id":%q,"amount":%v,"currency":"EUR","customer":"Zoë <Ørsted> & co"}`, id, amount)
}

// Receipt is a handler's response to the order id, with nesting, a
// fraction, null and text that JSON may escape.
func Receipt(id string) string {
	return fmt.Sprintf(`{"order_id":%q,"status":"charged","amount":12.5,"items":[{"sku":"A-1","qty":2}],"note":"café ✓ <b>&","ok":true,"none":null}`, id)
}

// Respond is a handler that answers resp.
func Respond(resp string) Func {
	return func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(resp), nil }
}

// Unsure is a handler whose outcome is uncertain: its record becomes
// UNCERTAIN.
func Unsure(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, idempotency.Uncertain(errors.New("the payment provider did not answer"))
}

// InProgress is what a duplicate of a golden IN_PROGRESS record gets:
// the holder's lease ends at At+Lease.
var InProgress = "InProgressError lease_end=" + stamp(At.Add(Lease))

// Replay is what a duplicate of a golden COMPLETE record gets: its
// response resp, stored at At.
func Replay(resp string) string { return "replay completed_at=" + stamp(At) + " " + resp }

// Conflict is what a duplicate with another amount gets from a golden
// record of an Order of 12.5 validated on [amount,currency]: the stored
// hash is the SHA-256 of [12.5,"EUR"], the library's own format.
const Conflict = "PayloadConflictError stored_hash=2f187853cebc55a88a208f55f1a314cec78c7b31e431c62b31d0c3cdd6eca931"

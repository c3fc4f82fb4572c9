package redisstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The fields of a record's hash. The scripts (scripts.go) name status,
// expiration, in_progress_expiration and lease_token themselves: change
// them together.
const (
	fieldStatus          = "status"
	fieldExpiry          = "expiration"             // epoch seconds
	fieldLeaseEnd        = "in_progress_expiration" // epoch milliseconds
	fieldDeadline        = "invocation_deadline"    // epoch milliseconds
	fieldLeaseToken      = "lease_token"
	fieldValidation      = "validation"
	fieldData            = "data"
	fieldResponseOmitted = "response_omitted" // "1", or absent
	fieldCompletedAt     = "completed_at"     // epoch milliseconds
)

// deleteAfterExpiry is how long the server keeps a record past its
// Expiry, counted on the writer's clock: the server's deletion is only
// the clean-up of records the callers already treat as gone (see
// ttl), and must never come first.
const deleteAfterExpiry = time.Minute

// fields returns rec's hash as HSET takes it: name, value, name, value...
// Zero times, empty strings and a false ResponseOmitted are left out, as
// the DynamoDB store leaves them out of its item: decode reads an absent
// field as the zero value, so the round trip is exact.
func fields(rec *idempotency.Record) []any {
	f := make([]any, 0, 18)
	f = append(f, fieldStatus, string(rec.Status))
	if !rec.Expiry.IsZero() {
		f = append(f, fieldExpiry, rec.Expiry.Unix())
	}
	if !rec.LeaseEnd.IsZero() {
		f = append(f, fieldLeaseEnd, rec.LeaseEnd.UnixMilli())
	}
	if !rec.Deadline.IsZero() {
		f = append(f, fieldDeadline, rec.Deadline.UnixMilli())
	}
	if rec.LeaseToken != "" {
		f = append(f, fieldLeaseToken, rec.LeaseToken)
	}
	if rec.PayloadHash != "" {
		f = append(f, fieldValidation, rec.PayloadHash)
	}
	if len(rec.Response) > 0 {
		f = append(f, fieldData, rec.Response)
	}
	if rec.ResponseOmitted {
		f = append(f, fieldResponseOmitted, "1")
	}
	if !rec.CompletedAt.IsZero() {
		f = append(f, fieldCompletedAt, rec.CompletedAt.UnixMilli())
	}
	return f
}

// size is what the record at key with fields f takes, as
// [Options.MaxRecordSize] counts it: the key, and each field's name and
// value, numbers as their decimal digits.
func size(key string, f []any) int {
	n := len(key)
	for _, v := range f {
		switch v := v.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		case int64:
			n += len(strconv.FormatInt(v, 10))
		}
	}
	return n
}

// ttl is the time to live, in milliseconds, of a record that expires at
// expiry, written at now: the time left until expiry on the writer's
// clock, plus deleteAfterExpiry. It is relative, and counted down by the
// server from when it receives the write, so an offset between the two
// clocks does not move the deletion. 0: no expiry.
func ttl(expiry, now time.Time) int64 {
	if expiry.IsZero() {
		return 0
	}
	left := max(expiry.Sub(now), 0)
	return (left + deleteAfterExpiry).Milliseconds()
}

// decode reads the hash of the record key. A hash it cannot read gives a
// [*idempotency.CorruptedRecordError]: the caller must not act on a record
// whose state it does not know. Fields it does not know are ignored, as
// the DynamoDB store ignores attributes.
func decode(key string, hash map[string]string) (*idempotency.Record, error) {
	corrupted := func(format string, args ...any) error {
		return &idempotency.CorruptedRecordError{Key: key, Reason: fmt.Sprintf(format, args...)}
	}
	rec := idempotency.Record{Key: key}
	status, ok := hash[fieldStatus]
	if !ok {
		return nil, corrupted("field %q is missing", fieldStatus)
	}
	switch rec.Status = idempotency.Status(status); rec.Status {
	case idempotency.StatusInProgress, idempotency.StatusComplete, idempotency.StatusUncertain:
	default:
		return nil, corrupted("unknown status %q in field %q", status, fieldStatus)
	}
	var err error
	if rec.Expiry, err = epoch(hash, fieldExpiry, seconds); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.LeaseEnd, err = epoch(hash, fieldLeaseEnd, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.Deadline, err = epoch(hash, fieldDeadline, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.CompletedAt, err = epoch(hash, fieldCompletedAt, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	rec.LeaseToken = hash[fieldLeaseToken]
	rec.PayloadHash = hash[fieldValidation]
	if data := hash[fieldData]; data != "" {
		rec.Response = []byte(data)
	}
	switch v, ok := hash[fieldResponseOmitted]; {
	case !ok:
	case v == "1":
		rec.ResponseOmitted = true
	default:
		return nil, corrupted("field %q is %q, want \"1\"", fieldResponseOmitted, v)
	}
	return &rec, nil
}

// epoch reads the field name as a whole number of seconds or milliseconds,
// which at converts; absent is the zero time.
func epoch(hash map[string]string, name string, at func(int64) time.Time) (time.Time, error) {
	v, ok := hash[name]
	if !ok {
		return time.Time{}, nil
	}
	n, ok := whole(v)
	if !ok {
		return time.Time{}, fmt.Errorf("field %q is %q, want a whole number of at most 15 digits", name, v)
	}
	return at(n).UTC(), nil
}

// whole reads s as the scripts' whole() reads it: an optional minus sign
// and 1 to 15 digits, which a Lua number (a float64) holds exactly. Epoch
// milliseconds have 13 digits until the year 2286. strconv.ParseInt alone
// would take a leading "+" that the scripts refuse.
func whole(s string) (int64, bool) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func seconds(s int64) time.Time { return time.Unix(s, 0) }

// hashOf reads the reply of HGETALL run in a script: a flat array of
// field names and values, which a Lua table hands over as strings.
func hashOf(reply []any) (map[string]string, error) {
	if len(reply)%2 != 0 {
		return nil, fmt.Errorf("a hash of %d elements", len(reply))
	}
	h := make(map[string]string, len(reply)/2)
	for i := 0; i < len(reply); i += 2 {
		name, ok1 := reply[i].(string)
		value, ok2 := reply[i+1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("a hash element of type %T, %T, want strings", reply[i], reply[i+1])
		}
		h[name] = value
	}
	return h, nil
}

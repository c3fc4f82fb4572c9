package redis

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The fields of a record's hash. The scripts name status,
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
	fieldOmittedReason   = "response_omitted_reason"
	fieldCompletedAt     = "completed_at" // epoch milliseconds
)

// deleteAfterExpiry is how long the server keeps a record past its
// Expiry, counted on the writer's clock: the server's deletion is only
// the clean-up of records the callers already treat as gone (see
// ttl), and must never come first.
const deleteAfterExpiry = time.Minute

// maxFields is how many fields appendFields writes at most.
const maxFields = 10

// appendFields appends rec's hash to args as HSET takes it: name, value,
// name, value... Zero times, empty strings and a false ResponseOmitted are
// left out, as the DynamoDB store leaves them out of its item: decode
// reads an absent field as the zero value, so the round trip is exact.
func appendFields(args []any, rec *idempotency.Record) []any {
	args = append(args, fieldStatus, string(rec.Status))
	if !rec.Expiry.IsZero() {
		args = append(args, fieldExpiry, rec.Expiry.Unix())
	}
	if !rec.LeaseEnd.IsZero() {
		args = append(args, fieldLeaseEnd, rec.LeaseEnd.UnixMilli())
	}
	if !rec.Deadline.IsZero() {
		args = append(args, fieldDeadline, rec.Deadline.UnixMilli())
	}
	if rec.LeaseToken != "" {
		args = append(args, fieldLeaseToken, rec.LeaseToken)
	}
	if rec.PayloadHash != "" {
		args = append(args, fieldValidation, rec.PayloadHash)
	}
	if len(rec.Response) > 0 {
		args = append(args, fieldData, rec.Response)
	}
	if rec.ResponseOmitted {
		args = append(args, fieldResponseOmitted, "1")
	}
	if rec.ResponseOmittedReason != "" {
		args = append(args, fieldOmittedReason, rec.ResponseOmittedReason)
	}
	if !rec.CompletedAt.IsZero() {
		args = append(args, fieldCompletedAt, rec.CompletedAt.UnixMilli())
	}
	return args
}

// size is what the fields f, as appendFields writes them, take as
// [Options.MaxRecordSize] counts them: each name and value, numbers as
// their decimal digits.
func size(f []any) int {
	n := 0
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

// fields holds the fields of a record's hash that decode reads, each with
// whether the hash has it: an absent field is the zero value, but an
// empty one may be corrupted.
type fields struct {
	status, expiry, leaseEnd, deadline, leaseToken, validation, data, responseOmitted, omittedReason, completedAt field
}

// field is the value of one field of a record's hash, and whether the
// hash has it.
type field struct {
	value string
	ok    bool
}

// set takes the field name of a record's hash. Fields decode does not
// know are ignored, as the DynamoDB store ignores attributes.
func (h *fields) set(name, value string) {
	f := field{value, true}
	switch name {
	case fieldStatus:
		h.status = f
	case fieldExpiry:
		h.expiry = f
	case fieldLeaseEnd:
		h.leaseEnd = f
	case fieldDeadline:
		h.deadline = f
	case fieldLeaseToken:
		h.leaseToken = f
	case fieldValidation:
		h.validation = f
	case fieldData:
		h.data = f
	case fieldResponseOmitted:
		h.responseOmitted = f
	case fieldOmittedReason:
		h.omittedReason = f
	case fieldCompletedAt:
		h.completedAt = f
	}
}

// fieldsOf reads the reply of HGETALL run in a script: a flat array of
// field names and values, which a Lua table hands over as strings. It
// walks the array straight into fields, without a map in between: a
// duplicate, the middleware's most frequent read, then costs no
// allocation and no hashing here.
func fieldsOf(reply []any) (fields, error) {
	var h fields
	if len(reply)%2 != 0 {
		return h, fmt.Errorf("a hash of %d elements", len(reply))
	}
	for i := 0; i < len(reply); i += 2 {
		name, ok1 := reply[i].(string)
		value, ok2 := reply[i+1].(string)
		if !ok1 || !ok2 {
			return h, fmt.Errorf("a hash element of type %T, %T, want strings", reply[i], reply[i+1])
		}
		h.set(name, value)
	}
	return h, nil
}

// fieldsOfMap reads the reply of HGETALL sent as a command, which
// go-redis hands over as a map.
func fieldsOfMap(m map[string]string) fields {
	var h fields
	for name, value := range m {
		h.set(name, value)
	}
	return h
}

// decode reads h, the hash of the record key. A hash it cannot read gives
// a [*idempotency.CorruptedRecordError]: the caller must not act on a
// record whose state it does not know.
func decode(key string, h *fields) (*idempotency.Record, error) {
	corrupted := func(format string, args ...any) error {
		return &idempotency.CorruptedRecordError{Key: key, Reason: fmt.Sprintf(format, args...)}
	}
	rec := idempotency.Record{Key: key}
	if !h.status.ok {
		return nil, corrupted("field %q is missing", fieldStatus)
	}
	switch rec.Status = idempotency.Status(h.status.value); rec.Status {
	case idempotency.StatusInProgress, idempotency.StatusComplete, idempotency.StatusUncertain:
	default:
		return nil, corrupted("unknown status %q in field %q", h.status.value, fieldStatus)
	}
	var err error
	if rec.Expiry, err = epoch(h.expiry, fieldExpiry, seconds); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.LeaseEnd, err = epoch(h.leaseEnd, fieldLeaseEnd, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.Deadline, err = epoch(h.deadline, fieldDeadline, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	if rec.CompletedAt, err = epoch(h.completedAt, fieldCompletedAt, time.UnixMilli); err != nil {
		return nil, corrupted("%v", err)
	}
	rec.LeaseToken = h.leaseToken.value
	rec.PayloadHash = h.validation.value
	rec.ResponseOmittedReason = h.omittedReason.value
	if h.data.value != "" {
		rec.Response = []byte(h.data.value)
	}
	switch v := h.responseOmitted; {
	case !v.ok:
	case v.value == "1":
		rec.ResponseOmitted = true
	default:
		return nil, corrupted("field %q is %q, want \"1\"", fieldResponseOmitted, v.value)
	}
	return &rec, nil
}

// epoch reads f, the field name, as a whole number of seconds or
// milliseconds, which at converts; absent is the zero time.
func epoch(f field, name string, at func(int64) time.Time) (time.Time, error) {
	if !f.ok {
		return time.Time{}, nil
	}
	n, ok := whole(f.value)
	if !ok {
		return time.Time{}, fmt.Errorf("field %q is %q, want a whole number of at most 15 digits", name, f.value)
	}
	return at(n).UTC(), nil
}

// whole reads s as the scripts' whole() reads it: an optional minus sign
// and 1 to 15 digits, which a Lua number (a float64) holds exactly, as
// does an int64. Epoch milliseconds have 13 digits until the year 2286.
// (strconv.ParseInt would take a leading "+" that the scripts refuse.)
func whole(s string) (int64, bool) {
	num := s
	if len(num) > 0 && num[0] == '-' {
		num = num[1:]
	}
	if len(num) == 0 || len(num) > 15 {
		return 0, false
	}
	var n int64
	for i := range len(num) {
		d := num[i] - '0' // wraps around below '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if len(num) < len(s) {
		n = -n
	}
	return n, true
}

func seconds(s int64) time.Time { return time.Unix(s, 0) }

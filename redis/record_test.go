package redis

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// decodeBoth decodes the hash m read both ways, as a script's HGETALL
// answers it (Acquire, Get) and as go-redis's HGETALL command does (Scan),
// and fails unless both agree.
func decodeBoth(t *testing.T, m map[string]string) (*idempotency.Record, error) {
	t.Helper()
	var reply []any
	for name, value := range m {
		reply = append(reply, name, value)
	}
	f, err := fieldsOf(reply)
	if err != nil {
		t.Fatalf("fieldsOf(%q): %v", reply, err)
	}
	rec, err := decode("k", &f)
	fm := fieldsOfMap(m)
	if rec2, err2 := decode("k", &fm); !reflect.DeepEqual(rec, rec2) || !reflect.DeepEqual(err, err2) {
		t.Errorf("decode of %v: as a script's reply %+v, %v; as a map %+v, %v", m, rec, err, rec2, err2)
	}
	return rec, err
}

func TestDecode(t *testing.T) {
	t.Parallel()
	full := map[string]string{
		"status":                   "COMPLETED",
		"expiration":               "1700000000",
		"in_progress_expiration":   "1699999999123",
		"invocation_deadline":      "1699999999000",
		"lease_token":              "0123456789abcdef0123456789abcdef",
		"validation":               "hash",
		"data":                     "\xff\x00{}",
		"response_omitted":         "1",
		"response_omitted_reason":  "could not be encrypted",
		"completed_at":             "1699999999456",
		"added_by_a_later_version": "ignored",
	}
	rec, err := decodeBoth(t, full)
	if err != nil {
		t.Fatal(err)
	}
	want := idempotency.Record{
		Key: "k", Status: idempotency.StatusComplete,
		Expiry:     time.Unix(1700000000, 0).UTC(),
		LeaseEnd:   time.UnixMilli(1699999999123).UTC(),
		LeaseToken: "0123456789abcdef0123456789abcdef", PayloadHash: "hash",
		Response: []byte("\xff\x00{}"), ResponseOmitted: true, ResponseOmittedReason: "could not be encrypted",
		CompletedAt: time.UnixMilli(1699999999456).UTC(),
		Deadline:    time.UnixMilli(1699999999000).UTC(),
	}
	if rec.Key != want.Key || rec.Status != want.Status || !rec.Expiry.Equal(want.Expiry) || !rec.LeaseEnd.Equal(want.LeaseEnd) ||
		rec.LeaseToken != want.LeaseToken || rec.PayloadHash != want.PayloadHash || !bytes.Equal(rec.Response, want.Response) || !rec.ResponseOmitted || rec.ResponseOmittedReason != want.ResponseOmittedReason ||
		!rec.CompletedAt.Equal(want.CompletedAt) || !rec.Deadline.Equal(want.Deadline) {
		t.Errorf("decode = %+v, want %+v", rec, want)
	}
	if minimal, err := decodeBoth(t, map[string]string{"status": "INPROGRESS"}); err != nil || !minimal.Expiry.IsZero() || minimal.Response != nil {
		t.Errorf("decode of a bare status = %+v, %v", minimal, err)
	}

	corrupted := []map[string]string{
		{},
		{"expiration": "1700000000"},
		{"status": "DONE"},
		{"status": "completed"},
		{"status": "COMPLETED", "expiration": "soon"},
		{"status": "COMPLETED", "expiration": "+1700000000"},
		{"status": "COMPLETED", "expiration": "1700000000.5"},
		{"status": "COMPLETED", "expiration": "1234567890123456"},
		{"status": "COMPLETED", "expiration": ""},
		{"status": "INPROGRESS", "in_progress_expiration": "0x10"},
		{"status": "COMPLETED", "response_omitted": "true"},
		{"status": "COMPLETED", "response_omitted": "0"},
		{"status": "COMPLETED", "completed_at": "yesterday"},
		{"status": "INPROGRESS", "invocation_deadline": "soon"},
	}
	for _, h := range corrupted {
		if rec, err := decodeBoth(t, h); !isCorrupted(err) {
			t.Errorf("decode(%v) = %+v, %v; want a *CorruptedRecordError", h, rec, err)
		}
	}
}

// TestFieldsOfRefusesOtherReplies: a script's reply that is not an array
// of names and values, all strings, is an error, not a record.
func TestFieldsOfRefusesOtherReplies(t *testing.T) {
	t.Parallel()
	for _, reply := range [][]any{
		{"status"},
		{"status", "COMPLETED", "data"},
		{"status", int64(1)},
		{[]byte("status"), "COMPLETED"},
		{"status", nil},
	} {
		if _, err := fieldsOf(reply); err == nil {
			t.Errorf("fieldsOf(%#v): no error", reply)
		}
	}
}

// TestRecordSizeLimit: MaxRecordSize counts the Redis key and each field's
// name and value, numbers as their decimal digits; a record of exactly the
// limit is written, one byte more is refused.
func TestRecordSizeLimit(t *testing.T) {
	t.Parallel()
	rec := &idempotency.Record{
		Key: "k", Status: idempotency.StatusComplete,
		Expiry:     time.Unix(1700000000, 0),
		Deadline:   time.UnixMilli(-5),
		LeaseToken: "tok", Response: []byte("{}"),
		CompletedAt: time.UnixMilli(1700000000123),
	}
	want := len("p:k") + len("status") + len("COMPLETED") + len("expiration") + len("1700000000") +
		len("invocation_deadline") + len("-5") + len("lease_token") + len("tok") +
		len("data") + len("{}") + len("completed_at") + len("1700000000123")
	now := time.Unix(1600000000, 0)
	for _, limit := range []int{want, want - 1} {
		o, err := options([]func(*Options){func(o *Options) { o.KeyPrefix, o.MaxRecordSize = "p:", limit }})
		if err != nil {
			t.Fatal(err)
		}
		s := &Store{opts: o} // record sends nothing
		_, err = s.record("complete", rec, now, "lead")
		if tooLarge := errors.Is(err, idempotency.ErrRecordTooLarge); tooLarge != (limit < want) {
			t.Errorf("a record of %d bytes, limit %d: %v", want, limit, err)
		}
	}
}

// TestMaxFields: a record with every field set has maxFields of them, the
// room record makes for them.
func TestMaxFields(t *testing.T) {
	t.Parallel()
	now := time.Now()
	all := &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, Expiry: now, LeaseEnd: now, Deadline: now,
		LeaseToken: "t", PayloadHash: "h", Response: []byte("{}"), ResponseOmitted: true, ResponseOmittedReason: "r", CompletedAt: now}
	if got := len(appendFields(nil, all)); got != 2*maxFields {
		t.Errorf("a record with every field has %d names and values, want 2*maxFields = %d", got, 2*maxFields)
	}
}

// TestWholeAgreesWithScripts runs the scripts' whole() on the server and
// decode's whole on the same strings: a time that one of them reads and
// the other refuses would let Acquire take over a record that Get calls
// corrupted, or the other way round.
func TestWholeAgreesWithScripts(t *testing.T) {
	t.Parallel()
	c := servers[0].client(t)
	inputs := []string{
		"0", "-0", "7", "-7", "007", "1700000000", "1699999999123",
		"999999999999999", "-999999999999999", "1000000000000000", "9007199254740993",
		"", "-", "+5", " 5", "5 ", "5\n", "0x10", "1e3", "1.5", "inf", "nan", "５", "١",
	}
	for _, in := range inputs {
		got, err := c.Eval(context.Background(), prelude+`
local n = whole(ARGV[1])
if n == nil then return false end
return string.format('%d', n)`, []string{"k"}, in).Result()
		var lua string
		var luaOK bool
		switch {
		case err == nil:
			lua, luaOK = got.(string), true
		case errors.Is(err, redis.Nil):
		default:
			t.Fatalf("whole(%q) on the server: %v", in, err)
		}
		n, goOK := whole(in)
		if luaOK != goOK || (goOK && lua != strconv.FormatInt(n, 10)) {
			t.Errorf("whole(%q): script (%q, %v), decode (%d, %v)", in, lua, luaOK, n, goOK)
		}
	}
}

func isCorrupted(err error) bool {
	_, ok := errors.AsType[*idempotency.CorruptedRecordError](err)
	return ok
}

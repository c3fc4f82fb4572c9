package redisstore

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

func TestDecode(t *testing.T) {
	full := map[string]string{
		"status":                   "COMPLETED",
		"expiration":               "1700000000",
		"in_progress_expiration":   "1699999999123",
		"invocation_deadline":      "1699999999000",
		"lease_token":              "0123456789abcdef0123456789abcdef",
		"validation":               "hash",
		"data":                     "\xff\x00{}",
		"response_omitted":         "1",
		"completed_at":             "1699999999456",
		"added_by_a_later_version": "ignored",
	}
	rec, err := decode("k", full)
	if err != nil {
		t.Fatal(err)
	}
	want := idempotency.Record{
		Key: "k", Status: idempotency.StatusComplete,
		Expiry:     time.Unix(1700000000, 0).UTC(),
		LeaseEnd:   time.UnixMilli(1699999999123).UTC(),
		LeaseToken: "0123456789abcdef0123456789abcdef", PayloadHash: "hash",
		Response: []byte("\xff\x00{}"), ResponseOmitted: true,
		CompletedAt: time.UnixMilli(1699999999456).UTC(),
		Deadline:    time.UnixMilli(1699999999000).UTC(),
	}
	if rec.Key != want.Key || rec.Status != want.Status || !rec.Expiry.Equal(want.Expiry) || !rec.LeaseEnd.Equal(want.LeaseEnd) ||
		rec.LeaseToken != want.LeaseToken || rec.PayloadHash != want.PayloadHash || !bytes.Equal(rec.Response, want.Response) || !rec.ResponseOmitted ||
		!rec.CompletedAt.Equal(want.CompletedAt) || !rec.Deadline.Equal(want.Deadline) {
		t.Errorf("decode = %+v, want %+v", rec, want)
	}
	if minimal, err := decode("k", map[string]string{"status": "INPROGRESS"}); err != nil || !minimal.Expiry.IsZero() || minimal.Response != nil {
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
		if rec, err := decode("k", h); !isCorrupted(err) {
			t.Errorf("decode(%v) = %+v, %v; want a *CorruptedRecordError", h, rec, err)
		}
	}
}

// TestWholeAgreesWithScripts runs the scripts' whole() on the server and
// decode's whole on the same strings: a time that one of them reads and
// the other refuses would let Acquire take over a record that Get calls
// corrupted, or the other way round.
func TestWholeAgreesWithScripts(t *testing.T) {
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

package dynamo

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func TestEncode(t *testing.T) {
	t.Parallel()
	o, _ := options([]func(*Options){func(o *Options) { o.TableName = "t" }})
	rec := &idempotency.Record{
		Key: "fn#abc", Status: idempotency.StatusComplete, LeaseToken: "tok", PayloadHash: "h",
		Expiry:   time.Unix(1700000000, 900_000_000),
		LeaseEnd: time.UnixMilli(1699999999123).Add(456 * time.Microsecond),
		Response: []byte(`{"a":1}`),
	}
	item := o.encode(rec)
	want := map[string]string{
		"id": "S:fn#abc", "status": "S:COMPLETED", "lease_token": "S:tok", "validation": "S:h",
		"expiration": "N:1700000000", "in_progress_expiration": "N:1699999999123", "data": `S:{"a":1}`,
	}
	if len(item) != len(want) {
		t.Errorf("item has %d attributes, want %d: %v", len(item), len(want), item)
	}
	for name, w := range want {
		if got := attrString(item[name]); got != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}

	rec.Response = []byte{0xff, 0xfe}
	rec.ResponseOmitted = true
	item = o.encode(rec)
	if b, ok := item["data"].(*types.AttributeValueMemberB); !ok || !bytes.Equal(b.Value, rec.Response) {
		t.Errorf("invalid UTF-8 data = %#v, want B", item["data"])
	}
	if v, ok := item["response_omitted"].(*types.AttributeValueMemberBOOL); !ok || !v.Value {
		t.Errorf("response_omitted = %#v, want BOOL true", item["response_omitted"])
	}

	o.SortKeyAttr, o.StaticPartitionKey = "sk", "idempotency#fn"
	item = o.encode(rec)
	if attrString(item["id"]) != "S:idempotency#fn" || attrString(item["sk"]) != "S:fn#abc" {
		t.Errorf("composite key = %s, %s", attrString(item["id"]), attrString(item["sk"]))
	}
	back, err := o.decode(rec.Key, item)
	if err != nil || back.Key != rec.Key {
		t.Errorf("decode of a composite item = %+v, %v", back, err)
	}
}

// A record Powertools for Python wrote (no lease token, no omitted flag)
// decodes.
func TestDecodePowertoolsItem(t *testing.T) {
	t.Parallel()
	o, _ := options([]func(*Options){func(o *Options) { o.TableName = "t" }})
	rec, err := o.decode("fn#abc", map[string]types.AttributeValue{
		"id":                     &types.AttributeValueMemberS{Value: "fn#abc"},
		"status":                 &types.AttributeValueMemberS{Value: "INPROGRESS"},
		"expiration":             &types.AttributeValueMemberN{Value: "1700000000"},
		"in_progress_expiration": &types.AttributeValueMemberN{Value: "1699999999123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != idempotency.StatusInProgress || rec.LeaseToken != "" || !rec.Expiry.Equal(time.Unix(1700000000, 0)) || !rec.LeaseEnd.Equal(time.UnixMilli(1699999999123)) {
		t.Errorf("decoded %+v", rec)
	}
}

func attrString(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case nil:
		return "absent"
	}
	return typeName(v)
}

// The in-memory store of idempotencytest holds records to the size of the
// item encode writes, with the default attribute names: it keeps a record
// at that size as its limit, and refuses it a byte below.
func TestRecordSize(t *testing.T) {
	t.Parallel()
	o, _ := options([]func(*Options){func(o *Options) { o.TableName = "t" }})
	at := time.UnixMilli(1700000000123)
	recs := []idempotency.Record{
		{Key: "k", Status: idempotency.StatusInProgress},
		{Key: "fn#abc", Status: idempotency.StatusInProgress, Expiry: at.Add(time.Hour), LeaseEnd: at.Add(time.Minute), LeaseToken: "tok", PayloadHash: "h", Deadline: at},
		{Key: "fn#abc", Status: idempotency.StatusComplete, Expiry: at, CompletedAt: at, Response: []byte(`{"a":"é"}`)},
		{Key: "k", Status: idempotency.StatusComplete, Response: []byte{0xff, 0xfe}},
		{Key: "k", Status: idempotency.StatusComplete, Response: []byte{}, ResponseOmitted: true, ResponseOmittedReason: "too large"},
		{Key: "k", Status: idempotency.StatusUncertain, Expiry: time.Unix(-5, 0), LeaseEnd: time.UnixMilli(-1)},
	}
	for _, rec := range recs {
		size := itemSize(o.encode(&rec))
		for _, limit := range []int{size, size - 1} {
			mem := idempotencytest.NewStore()
			mem.SetMaxItemSize(limit)
			_, err := mem.Acquire(t.Context(), &rec, at)
			if tooLarge := errors.Is(err, idempotency.ErrRecordTooLarge); tooLarge != (limit < size) || (err != nil && !tooLarge) {
				t.Errorf("idempotencytest's Acquire of %+v under a limit of %d bytes, the encoded item being %d: %v", rec, limit, size, err)
			}
		}
	}
}

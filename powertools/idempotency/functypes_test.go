package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The tests in this file check what WrapFunc refuses of its function's
// types when it is built, and of its argument on each call
// (docs/security.md, "What is refused").

type sensorReading struct {
	time.Time
	Sensor string
	Value  float64
}

type endpoint struct {
	netip.Addr
	Port int
}

type deeper struct {
	Site    string
	Reading sensorReading
}

// wrapperOnly wraps a type that marshals itself, and hides nothing.
type wrapperOnly struct{ time.Time }

// TestWrapFuncPromotedMarshaller: json.Marshal writes a struct that embeds
// time.Time (or netip.Addr) with the embedded type's MarshalJSON
// (MarshalText) alone, so two sensors' readings at the same second shared
// a key. Such an argument type is refused when the function is wrapped;
// aws-lambda-go's SecondsEpochTime, which embeds time.Time and declares
// its own MarshalJSON, is not.
func TestWrapFuncPromotedMarshaller(t *testing.T) {
	t.Parallel()
	refused := []struct {
		name string
		try  func() error
	}{
		{"time.Time", func() error { _, err := newFunc("f", idempotencytest.NewStore(), identity[sensorReading]); return err }},
		{"netip.Addr", func() error { _, err := newFunc("f", idempotencytest.NewStore(), identity[endpoint]); return err }},
		{"inside a field", func() error { _, err := newFunc("f", idempotencytest.NewStore(), identity[[]deeper]); return err }},
		{"by pointer", func() error { _, err := newFunc("f", idempotencytest.NewStore(), identity[*sensorReading]); return err }},
	}
	for _, tt := range refused {
		var ce *idempotency.ConfigError
		if err := tt.try(); !errors.As(err, &ce) || ce.Name != "fn" || !strings.Contains(err.Error(), "leaves out its field") {
			t.Errorf("%s: err = %v, want a ConfigError of fn", tt.name, err)
		}
	}
	accepted := []struct {
		name string
		try  func() error
	}{
		{"a Kinesis record", func() error {
			_, err := newFunc("f", idempotencytest.NewStore(), identity[events.KinesisEventRecord])
			return err
		}},
		{"a DynamoDB Streams record", func() error {
			_, err := newFunc("f", idempotencytest.NewStore(), identity[events.DynamoDBEventRecord])
			return err
		}},
		{"a struct that only wraps time.Time", func() error { _, err := newFunc("f", idempotencytest.NewStore(), identity[wrapperOnly]); return err }},
		{"time.Time", func() error { _, err := newFunc("f", idempotencytest.NewStore(), identity[time.Time]); return err }},
	}
	for _, tt := range accepted {
		if err := tt.try(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}

	// A reading at another second, or of another sensor, is another key.
	runs := 0
	f, err := newFunc("f", idempotencytest.NewStore(), func(_ context.Context, r events.KinesisEventRecord) (string, error) {
		runs++
		return r.EventID, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.KinesisEventRecord{EventID: "e1", Kinesis: events.KinesisRecord{SequenceNumber: "1", ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Unix(1700000000, 0)}, Data: []byte("x")}}
	for range 2 {
		if _, err := f(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	rec.Kinesis.ApproximateArrivalTimestamp.Time = time.Unix(1700000001, 0)
	if _, err := f(context.Background(), rec); err != nil || runs != 2 {
		t.Errorf("runs = %d, %v; want 2: the second call is a replay, the third another record", runs, err)
	}
}

func identity[T any](_ context.Context, v T) (string, error) { return "ok", nil }

// TestWrapFuncBytesInAny: json.Marshal writes []byte("hi") in an
// interface value as "aGk=", as it writes that string: the two arguments
// shared a key. A []byte held in an interface value is refused now.
func TestWrapFuncBytesInAny(t *testing.T) {
	t.Parallel()
	type arg struct{ Data any }
	runs := 0
	f, err := newFunc("f", idempotencytest.NewStore(), func(_ context.Context, a arg) (string, error) {
		runs++
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f(ctx, arg{Data: "aGk="}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{[]byte("hi"), map[string]any{"b": []byte("hi")}, []any{[]byte("hi")}} {
		if _, err := f(ctx, arg{Data: v}); !isA[*idempotency.InvalidEventError](err) {
			t.Errorf("%#v: err = %v, want an InvalidEventError", v, err)
		}
	}
	if _, err := f(ctx, arg{Data: json.RawMessage(`"aGk="`)}); err != nil || runs != 1 {
		t.Errorf("runs = %d, %v; want the string's replay", runs, err)
	}

	// A []byte field has a type: its base64 is its own.
	g, err := newFunc("g", idempotencytest.NewStore(), func(_ context.Context, b struct{ B []byte }) (string, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g(ctx, struct{ B []byte }{[]byte("hi")}); err != nil {
		t.Error(err)
	}
}

type withError struct {
	OK  bool
	Err error
}

type unexportedResult struct {
	ID    string
	notes string
}

func (r unexportedResult) String() string { return r.ID + ": " + r.notes }

type skippedResult struct {
	ID     string
	Secret string `json:"-"`
}

type status int

func (s status) MarshalJSON() ([]byte, error) { return json.Marshal(int(s)) }

type floatKeys map[float64]string

// TestWrapFuncResultTypes: a duplicate gets the stored result decoded into
// the function's result type. With an error field every duplicate got a
// *CorruptedRecordError (and deleting the record, the documented remedy,
// ran the effect again); a result of type any replayed an int as a
// float64. A result type that cannot come back from JSON as the function
// returned it is refused when the function is wrapped.
func TestWrapFuncResultTypes(t *testing.T) {
	t.Parallel()
	store := idempotencytest.NewStore()
	refused := map[string]func() error{
		"an error field": func() error { _, err := newFunc("f", store, resultOf[withError]); return err },
		"any":            func() error { _, err := newFunc("f", store, resultOf[any]); return err },
		"an error":       func() error { _, err := newFunc("f", store, resultOf[error]); return err },
		"a func field":   func() error { _, err := newFunc("f", store, resultOf[struct{ F func() }]); return err },
		"a channel":      func() error { _, err := newFunc("f", store, resultOf[[]chan int]); return err },
		"a map of any":   func() error { _, err := newFunc("f", store, resultOf[map[string]any]); return err },
		"an unexported field": func() error {
			_, err := newFunc("f", store, resultOf[unexportedResult])
			return err
		},
		"a json:\"-\" field": func() error { _, err := newFunc("f", store, resultOf[skippedResult]); return err },
		"MarshalJSON alone":  func() error { _, err := newFunc("f", store, resultOf[status]); return err },
		"float keys":         func() error { _, err := newFunc("f", store, resultOf[floatKeys]); return err },
		"a promoted marshaller": func() error {
			_, err := newFunc("f", store, resultOf[sensorReading])
			return err
		},
	}
	for name, try := range refused {
		var ce *idempotency.ConfigError
		if err := try(); !errors.As(err, &ce) || ce.Name != "fn" || !strings.Contains(err.Error(), "result type") {
			t.Errorf("%s: err = %v, want a ConfigError of fn on its result type", name, err)
		}
	}
	accepted := map[string]func() error{
		"a string":        func() error { _, err := newFunc("f", store, resultOf[string]); return err },
		"time.Time":       func() error { _, err := newFunc("f", store, resultOf[time.Time]); return err },
		"netip.Addr keys": func() error { _, err := newFunc("f", store, resultOf[map[netip.Addr]int]); return err },
		"int keys":        func() error { _, err := newFunc("f", store, resultOf[map[int][]byte]); return err },
		"json.RawMessage": func() error { _, err := newFunc("f", store, resultOf[json.RawMessage]); return err },
		"an API Gateway response": func() error {
			_, err := newFunc("f", store, resultOf[events.APIGatewayV2HTTPResponse])
			return err
		},
		"a Kinesis record": func() error {
			_, err := newFunc("f", store, resultOf[events.KinesisEventRecord])
			return err
		},
	}
	for name, try := range accepted {
		if err := try(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func resultOf[T any](context.Context, int) (T, error) {
	var zero T
	return zero, nil
}

// TestWrapFuncPerStreamRecord: batch processing with WrapFunc per Kinesis
// record (KinesisRecord's SecondsEpochTime embeds time.Time and declares
// its own MarshalJSON) and per DynamoDB Streams record (whose images'
// DynamoDBAttributeValue marshals itself) keeps working: a redelivered
// batch runs no record again.
func TestWrapFuncPerStreamRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := idempotencytest.NewStore()
	runs := map[string]int{}
	kin := idempotency.WrapFunc("kinesis", store, func(_ context.Context, r events.KinesisEventRecord) (string, error) {
		runs[r.EventID]++
		return r.EventID, nil
	}, idempotency.WithEventKey("[eventID, kinesis.approximateArrivalTimestamp]"))
	ddb := idempotency.WrapFunc("ddb", store, func(_ context.Context, r events.DynamoDBEventRecord) (string, error) {
		runs[r.EventID]++
		return r.EventID, nil
	}, idempotency.WithPayloadValidation("dynamodb.NewImage"))
	p, err := batch.New()
	if err != nil {
		t.Fatal(err)
	}
	at := events.SecondsEpochTime{Time: time.Unix(1700000000, 0)}
	kinesis := events.KinesisEvent{Records: []events.KinesisEventRecord{
		{EventID: "k1", Kinesis: events.KinesisRecord{ApproximateArrivalTimestamp: at, Data: []byte("a"), SequenceNumber: "1"}},
		{EventID: "k2", Kinesis: events.KinesisRecord{ApproximateArrivalTimestamp: at, Data: []byte("b"), SequenceNumber: "2"}},
	}}
	image := map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute("o-1"), "n": events.NewNumberAttribute("2")}
	stream := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		{EventID: "d1", Change: events.DynamoDBStreamRecord{SequenceNumber: "1", NewImage: image}},
	}}
	for range 2 {
		res := p.Kinesis(ctx, kinesis, func(ctx context.Context, r events.KinesisEventRecord) error { _, err := kin(ctx, r); return err })
		if len(res.Failures) > 0 {
			t.Fatal(res.Failures[0].Err)
		}
		res = p.DynamoDB(ctx, stream, func(ctx context.Context, r events.DynamoDBEventRecord) error { _, err := ddb(ctx, r); return err })
		if len(res.Failures) > 0 {
			t.Fatal(res.Failures[0].Err)
		}
	}
	if runs["k1"] != 1 || runs["k2"] != 1 || runs["d1"] != 1 {
		t.Errorf("runs %v, want each record once", runs)
	}
}

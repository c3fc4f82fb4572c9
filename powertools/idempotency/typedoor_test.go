package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The tests in this file check that the middleware reads the key and the
// validated payload as encoding/json decodes the event into the handler's
// own type (docs/security.md, "The handler's type"): map keys that
// encoding/json converts, values that decode themselves, and nulls that
// the type tells from absent members.

// outcome names what one call of a wrapped handler did: "run", "replay",
// or the kind of error it returned.
func outcome(err error, ran bool) string {
	switch {
	case err == nil && ran:
		return "run"
	case err == nil:
		return "replay"
	case isA[*idempotency.InvalidEventError](err):
		return "invalid"
	case isA[*idempotency.PayloadConflictError](err):
		return "conflict"
	case isA[*idempotency.MissingKeyError](err):
		return "missing"
	case isA[*idempotency.UndecodableEventError](err):
		return "undecodable"
	}
	return err.Error()
}

// runTyped sends events in turn to a handler over In built with opts on
// one store, and returns what each call did, or the build's error.
func runTyped[In any](t *testing.T, opts []idempotency.Option, events ...string) ([]string, error) {
	t.Helper()
	ran := false
	h, err := idempotency.New(idempotencytest.NewStore(), func(context.Context, In) (string, error) {
		ran = true
		return "done", nil
	}, append([]idempotency.Option{idempotency.WithKeyPrefix("typed")}, opts...)...)
	if err != nil {
		return nil, err
	}
	var got []string
	for _, ev := range events {
		ran = false
		_, err := h.Invoke(context.Background(), []byte(ev))
		got = append(got, outcome(err, ran))
	}
	return got, nil
}

// allModes are the formats a case runs in.
var allModes = append([]idempotency.Compatibility{idempotency.OwnFormat}, modes...)

type quantities struct {
	ID  string          `json:"id"`
	Qty map[int]int64   `json:"qty"`
	U   map[uint8]int64 `json:"u"`
}

type hosts struct {
	ID    string             `json:"id"`
	Hosts map[netip.Addr]int `json:"hosts"`
}

// TestMapKeysReadAsTheTypeDecodes: encoding/json turns the member names
// "1", "01", "+1" and "001" of an object decoded into a map[int]... into
// the one key 1, the last one winning, and two spellings of an IPv6
// address into one netip.Addr. The strict read compares names as text: a
// second event that the handler reads as 999 was replayed the first
// one's response, or keyed alike. Such an object is refused now.
func TestMapKeysReadAsTheTypeDecodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		validation string
		hosts      bool
		events     []string
		want       []string
	}{
		{"a name that becomes the looked-up key", `qty."1"`, false,
			[]string{`{"id":"a","qty":{"1":1}}`, `{"id":"a","qty":{"1":1,"01":999}}`}, []string{"run", "invalid"}},
		{"the looked-up key under another name only", `qty."1"`, false,
			[]string{`{"id":"a"}`, `{"id":"a","qty":{"01":999}}`}, []string{"run", "invalid"}},
		{"zero and minus zero", `qty."0"`, false,
			[]string{`{"id":"a","qty":{"0":1}}`, `{"id":"a","qty":{"0":1,"-0":999}}`}, []string{"run", "invalid"}},
		{"a plus sign", `qty."1"`, false,
			[]string{`{"id":"a","qty":{"1":1}}`, `{"id":"a","qty":{"+1":999,"1":1}}`}, []string{"run", "invalid"}},
		{"leading zeros, elsewhere in the map", `qty."2"`, false,
			[]string{`{"id":"a","qty":{"2":1,"5":5}}`, `{"id":"a","qty":{"2":1,"5":5,"005":999}}`}, []string{"run", "invalid"}},
		{"the whole map", `qty`, false,
			[]string{`{"id":"a","qty":{"001":1,"1":999}}`, `{"id":"a","qty":{"1":999,"001":1}}`}, []string{"invalid", "invalid"}},
		{"the whole event", `@`, false,
			[]string{`{"id":"a","qty":{"1":1,"01":999}}`}, []string{"invalid"}},
		{"its values", `qty.*`, false,
			[]string{`{"id":"a","qty":{"1":1}}`, `{"id":"a","qty":{"1":1,"01":999}}`}, []string{"run", "invalid"}},
		{"two spellings of one address", `hosts."2001:db8::1"`, true,
			[]string{`{"id":"a","hosts":{"2001:db8::1":1}}`, `{"id":"a","hosts":{"2001:db8::1":1,"2001:0db8:0::1":999}}`}, []string{"run", "invalid"}},
		{"keys that differ are kept apart", `qty`, false,
			[]string{`{"id":"a","qty":{"1":1,"2":2}}`, `{"id":"a","qty":{"2":2,"1":1}}`, `{"id":"a","qty":{"1":1,"2":3}}`}, []string{"run", "replay", "conflict"}},
		{"a name that is no key is the handler's to refuse", `qty."1"`, false,
			[]string{`{"id":"a","qty":{"1":1,"x":2}}`}, []string{"undecodable"}},
	}
	for _, m := range allModes {
		for _, tt := range tests {
			t.Run(m.String()+"/"+tt.name, func(t *testing.T) {
				opts := []idempotency.Option{idempotency.WithCompatibility(m), idempotency.WithEventKey("id"), idempotency.WithPayloadValidation(tt.validation)}
				var got []string
				var err error
				if tt.hosts {
					got, err = runTyped[hosts](t, opts, tt.events...)
				} else {
					got, err = runTyped[quantities](t, opts, tt.events...)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("calls did %v, want %v", got, tt.want)
				}
			})
		}
	}
}

// TestMapKeyThatNoEventHas: a name that encoding/json cannot make a key
// of the map's type is refused when the handler is built.
func TestMapKeyThatNoEventHas(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ key, validation string }{
		{`qty.abc`, ""},
		{"id", `u."256"`},
		{"id", `[id, qty."1.5"]`},
	} {
		opts := []idempotency.Option{idempotency.WithEventKey(tt.key)}
		if tt.validation != "" {
			opts = append(opts, idempotency.WithPayloadValidation(tt.validation))
		}
		_, err := runTyped[quantities](t, opts)
		var ce *idempotency.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Error(), "map[") {
			t.Errorf("%s, %s: err = %v, want a ConfigError naming the map type", tt.key, tt.validation, err)
		}
	}
}

// s3Notification is an S3 event notification for the object key, as S3
// writes it (URL-encoded, without urlDecodedKey), with members added.
func s3Notification(key, extra string) string {
	return `{"Records":[{"eventSource":"aws:s3","s3":{"bucket":{"name":"invoices"},"object":{"key":"` + key + `","size":1024` + extra + `}}}]}`
}

// TestSelfDecodingTypeOnThePath: aws-lambda-go's S3Object computes
// URLDecodedKey in its UnmarshalJSON. A key on
// Records[0].s3.object.urlDecodedKey read a member of that name from the
// event: a real notification has none, so it had no key and every
// delivery ran, while a crafted one got the response of another
// invoice. Now the middleware reads what S3Object decodes; in a
// Powertools mode, which keys on the event's member, an event where the
// two differ is refused.
func TestSelfDecodingTypeOnThePath(t *testing.T) {
	t.Parallel()
	const key = "Records[0].s3.object.urlDecodedKey"
	real := s3Notification("invoice+1.pdf", "")
	tests := []struct {
		mode   idempotency.Compatibility
		events []string
		want   []string
	}{
		{idempotency.OwnFormat, []string{real, real}, []string{"run", "replay"}},
		{idempotency.OwnFormat, []string{
			s3Notification("a.pdf", `,"urlDecodedKey":"invoice 1.pdf"`),
			s3Notification("b.pdf", `,"urlDecodedKey":"invoice 1.pdf"`),
			real,
		}, []string{"run", "run", "run"}},
		{idempotency.PowertoolsPython, []string{real}, []string{"invalid"}},
		{idempotency.PowertoolsPython, []string{
			s3Notification("a.pdf", `,"urlDecodedKey":"invoice 1.pdf"`),
			s3Notification("invoice+1.pdf", `,"urlDecodedKey":"invoice 1.pdf"`),
			s3Notification("invoice+1.pdf", `,"urlDecodedKey":"invoice 1.pdf"`),
		}, []string{"invalid", "run", "replay"}},
	}
	for _, tt := range tests {
		got, err := runTyped[events.S3Event](t, []idempotency.Option{
			idempotency.WithCompatibility(tt.mode), idempotency.WithEventKey(key), idempotency.WithKeyRequired(true),
		}, tt.events...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%v: calls did %v, want %v", tt.mode, got, tt.want)
		}
	}

	// The key is what the handler reads: the decoded key's own.
	h := idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, events.S3Event) (string, error) { return "", nil },
		idempotency.WithKeyPrefix("typed"), idempotency.WithEventKey(key))
	ref := idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, json.RawMessage) (string, error) { return "", nil },
		idempotency.WithKeyPrefix("typed"), idempotency.WithEventKey("k"))
	got, _, err := h.KeyOf([]byte(real))
	want, _, _ := ref.KeyOf([]byte(`{"k":"invoice 1.pdf"}`))
	if err != nil || got != want {
		t.Errorf("KeyOf = %q, %v; want %q, the key of the decoded key", got, err, want)
	}
}

// TestSelfDecodingTypeRefusedAtBuild: a path inside a value that decodes
// itself, at a place that what it decodes never fills, is refused when
// the handler is built, naming the path, the type and the path to use
// instead; so is a step into one through a function's result, which the
// middleware cannot follow.
func TestSelfDecodingTypeRefusedAtBuild(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ expr, wants string }{
		{"Records[0].s3.object.decodedKey", "Read Records[0].s3.object"},
		{"Records[0].s3.object.key.x", "events.S3Object"},
		{"not_null(Records[0]).s3.object.urlDecodedKey", "function"},
		{"[Records[0]][0].s3.object.key", "multi-select"},
		{"not_null(Records[0].s3.object).urlDecodedKey", "events.S3Object"},
	} {
		_, err := runTyped[events.S3Event](t, []idempotency.Option{idempotency.WithEventKey(tt.expr)})
		var ce *idempotency.ConfigError
		if !errors.As(err, &ce) || ce.Name != "WithEventKey" || !strings.Contains(ce.Error(), tt.wants) {
			t.Errorf("%s: err = %v, want a ConfigError of WithEventKey that says %q", tt.expr, err, tt.wants)
		}
	}
}

// profile is a merge-patch: an absent e-mail means "no change", a null
// one "delete it"; json.RawMessage tells them apart.
type profile struct {
	ID    string          `json:"id"`
	Email json.RawMessage `json:"email"`
	Name  string          `json:"name"`
}

// TestNullTellsFromAbsent: validation on email, where the handler's field
// is a json.RawMessage (or the handler's map holds the entry or not),
// hashed an absent member and a null one alike: "delete the e-mail" was
// replayed the response of "no change". The own format hashes them apart
// now; a Powertools mode, whose hash is Powertools', refuses the null.
func TestNullTellsFromAbsent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, validation string
		anyMap           bool
		events           []string
		own, compat      []string
	}{
		{"a json.RawMessage field", "email", false,
			[]string{`{"id":"a"}`, `{"id":"a","email":null}`, `{"id":"a","email":null}`},
			[]string{"run", "conflict", "conflict"}, []string{"run", "invalid", "invalid"}},
		{"null first", "email", false,
			[]string{`{"id":"a","email":null}`, `{"id":"a"}`, `{"id":"a","email":null}`},
			[]string{"run", "conflict", "replay"}, []string{"invalid", "run", "invalid"}},
		{"in a multi-select list", "[email, name]", false,
			[]string{`{"id":"a","name":"n"}`, `{"id":"a","name":"n","email":null}`},
			[]string{"run", "conflict"}, []string{"run", "invalid"}},
		{"in a multi-select hash", "{e: email}", false,
			[]string{`{"id":"a"}`, `{"id":"a","email":null}`},
			[]string{"run", "conflict"}, []string{"run", "invalid"}},
		{"a string field does not tell", "name", false,
			[]string{`{"id":"a"}`, `{"id":"a","name":null}`},
			[]string{"run", "replay"}, []string{"run", "replay"}},
		{"an entry of a map", "email", true,
			[]string{`{"id":"a"}`, `{"id":"a","email":null}`},
			[]string{"run", "conflict"}, []string{"run", "invalid"}},
		{"inside a value of a map", "p.email", true,
			[]string{`{"id":"a","p":{}}`, `{"id":"a","p":{"email":null}}`},
			[]string{"run", "conflict"}, []string{"run", "invalid"}},
	}
	for _, m := range allModes {
		for _, tt := range tests {
			t.Run(m.String()+"/"+tt.name, func(t *testing.T) {
				opts := []idempotency.Option{idempotency.WithCompatibility(m), idempotency.WithEventKey("id"), idempotency.WithPayloadValidation(tt.validation)}
				var got []string
				var err error
				if tt.anyMap {
					got, err = runTyped[map[string]any](t, opts, tt.events...)
				} else {
					got, err = runTyped[profile](t, opts, tt.events...)
				}
				if err != nil {
					t.Fatal(err)
				}
				want := tt.own
				if m != idempotency.OwnFormat {
					want = tt.compat
				}
				if !slices.Equal(got, want) {
					t.Errorf("calls did %v, want %v", got, want)
				}
			})
		}
	}
}

type reading struct {
	Sensor string    `json:"sensor"`
	At     time.Time `json:"at"`
}

// TestTypeDoorKeepsWorking: handler types whose paths hold nothing to
// read otherwise are keyed and replayed as before, and so are the values
// that decode themselves where they read back as the event holds them.
func TestTypeDoorKeepsWorking(t *testing.T) {
	t.Parallel()
	stream := `{"Records":[{"eventID":"e1","eventName":"INSERT","dynamodb":{"Keys":{"id":{"S":"o-1"}},"NewImage":{"id":{"S":"o-1"},"n":{"N":"2"}},"SequenceNumber":"1"}}]}`
	tests := []struct {
		name   string
		run    func(opts []idempotency.Option, events ...string) ([]string, error)
		opts   []idempotency.Option
		events []string
		want   []string
	}{
		{"validation on @ over a struct with a time.Time",
			func(o []idempotency.Option, e ...string) ([]string, error) { return runTyped[reading](t, o, e...) },
			[]idempotency.Option{idempotency.WithEventKey("sensor"), idempotency.WithPayloadValidation("@")},
			[]string{`{"sensor":"s","at":"2026-01-02T03:04:05Z"}`, `{"at":"2026-01-02T03:04:05Z","sensor":"s"}`, `{"sensor":"s","at":"2026-01-02T03:04:06Z"}`},
			[]string{"run", "replay", "conflict"}},
		{"a DynamoDB Streams image",
			func(o []idempotency.Option, e ...string) ([]string, error) {
				return runTyped[events.DynamoDBEvent](t, o, e...)
			},
			[]idempotency.Option{idempotency.WithEventKey("Records[0].dynamodb.Keys.id.S"), idempotency.WithPayloadValidation("Records[0].dynamodb.NewImage")},
			[]string{stream, stream},
			[]string{"run", "replay"}},
		{"a json.RawMessage",
			func(o []idempotency.Option, e ...string) ([]string, error) {
				return runTyped[json.RawMessage](t, o, e...)
			},
			[]idempotency.Option{idempotency.WithEventKey("detail.settlement_id"), idempotency.WithPayloadValidation("detail.amount")},
			[]string{`{"detail":{"settlement_id":"s1","amount":5}}`, `{"detail":{"amount":5,"settlement_id":"s1"}}`, `{"detail":{"settlement_id":"s1"}}`},
			[]string{"run", "replay", "conflict"}},
		{"EventBridge's json.RawMessage detail",
			func(o []idempotency.Option, e ...string) ([]string, error) {
				return runTyped[events.EventBridgeEvent](t, o, e...)
			},
			[]idempotency.Option{idempotency.WithEventKey("detail.settlement_id"), idempotency.WithPayloadValidation("detail.amount")},
			[]string{`{"detail":{"settlement_id":"s1","amount":5}}`, `{"detail":{"amount":5,"settlement_id":"s1"}}`},
			[]string{"run", "replay"}},
	}
	for _, m := range allModes {
		for _, tt := range tests {
			t.Run(m.String()+"/"+tt.name, func(t *testing.T) {
				got, err := tt.run(append([]idempotency.Option{idempotency.WithCompatibility(m)}, tt.opts...), tt.events...)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("calls did %v, want %v", got, tt.want)
				}
			})
		}
	}
}

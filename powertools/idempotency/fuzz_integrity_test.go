package idempotency_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// FuzzKeyIntegrity is a differential test of the middleware against
// encoding/json, the decoder of the handler it wraps. For every event it
// accepts, the key it used and the payload hash it stored or compared must
// be those of the values a struct decoded from the same event holds; where
// the struct holds no key, the middleware must not have keyed the event. An
// event it refuses must be refused with an *InvalidEventError, before any
// store call, without a run or a replay.
//
// The events are first and second as given, then those that program
// generates (see eventGen), all run in turn against each configuration of
// fuzzConfigs with one store, so that later events meet the records of
// earlier ones, through each entry point of fuzzEntries: the handler of
// Wrap, and function wrappers whose argument holds the event as raw JSON
// or the event's body as a string, which json.Marshal writes into the
// bytes the middleware reads. Every entry point must read alike.
func FuzzKeyIntegrity(f *testing.F) {
	for _, tc := range integrityCases {
		seed := ""
		if len(tc.seed) > 0 {
			seed = tc.seed[0]
		}
		f.Add(seed, tc.attack, []byte(nil))
	}
	// {"order_id":"A","body":"{\"order_id\":\"A\"}"}
	f.Add("", "", []byte{})
	// {"order_id":"A","amount":100,"item":{"id":"B","amount":1},"body":"{\"order_id\":\"B\",\"amount\":1.0}"}
	order := []byte{2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 4, 0, 0, 0, 0, 1, 5, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 2}
	f.Add("", "", append([]byte{0}, order...))
	// The same event twice: the second is a replay.
	f.Add("", "", append(append([]byte{1}, order...), order...))
	// {"\u006b\u0069\u006e\u0064":"A","sku":"B","body":"{\"kind\":\"B\",\"sku\":\"A\"}"}
	f.Add("", "", []byte{0, 1, 2, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0, 1, 0, 1, 2, 0, 0, 0, 0, 1, 3, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, first, second string, program []byte) {
		var evs [][]byte
		for _, ev := range []string{first, second} {
			if ev != "" {
				evs = append(evs, []byte(ev))
			}
		}
		g := &eventGen{src: program}
		for n := 1 + g.pick(3); n > 0; n-- {
			evs = append(evs, g.event())
		}
		for _, entry := range fuzzEntries {
			for _, cfg := range fuzzConfigs {
				r := newFuzzRun(t, entry, cfg)
				for _, ev := range evs {
					if err := r.check(ev); err != nil {
						t.Errorf("%s: key %q, validation %q, event %q: %v", entry, cfg.key, cfg.validation, ev, err)
						break
					}
				}
			}
		}
	})
}

// seenValue is how the fuzz handler's struct holds each field on a key or
// validation path: the raw value of the member encoding/json gave it, any
// JSON type, so that numbers, strings and objects are compared alike. Null
// leaves it as it was, as it leaves a string, number or struct field.
type seenValue struct {
	raw  []byte // nil: no value
	null bool   // a member was null, which the struct does not see
}

func (v *seenValue) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		v.raw = bytes.Clone(b)
	} else {
		v.null = true
	}
	return nil
}

// fuzzDoc is the handler's view of the event, and of the document in its
// body. Body is a seenValue, not a string, so that a body of another type
// is seen too: powertools_json fails on it.
type fuzzDoc struct {
	Body    seenValue `json:"body"`
	OrderID seenValue `json:"order_id"`
	Amount  seenValue `json:"amount"`
	Kind    seenValue `json:"kind"`
	SKU     seenValue `json:"sku"`
	Item    struct {
		ID     seenValue `json:"id"`
		Amount seenValue `json:"amount"`
	} `json:"item"`
}

// fuzzPath is where a key or validation expression reads: a field of the
// handler's view (nil: the whole document), in the event or in the
// document of its body.
type fuzzPath struct {
	inBody bool
	field  func(*fuzzDoc) seenValue
}

// view returns the value at p as encoding/json gives it to the handler, nil
// for none. broken reports that the path runs through a body that is not
// JSON text, a string that is not JSON or a value that is not a string, on
// which the expression fails rather than selects nothing. Without a body,
// the expression may do either: both leave the event without a key.
func (p fuzzPath) view(event []byte, ev *fuzzDoc) (raw []byte, broken bool) {
	doc := ev
	if p.inBody {
		if ev.Body.raw == nil {
			return nil, false
		}
		var text string
		if json.Unmarshal(ev.Body.raw, &text) != nil || !json.Valid([]byte(text)) {
			return nil, true
		}
		if p.field == nil {
			return []byte(text), false
		}
		doc = new(fuzzDoc)
		json.Unmarshal([]byte(text), doc) // a type error skips a member: see isTypeErrorOrNil
	} else if p.field == nil {
		return event, false
	}
	return p.field(doc).raw, false
}

// fuzzConfig is a key and a validation expression and where, in the
// handler's view, they must read.
type fuzzConfig struct {
	key, validation   string
	keyPath, hashPath fuzzPath
}

var (
	viewOrderID    = func(d *fuzzDoc) seenValue { return d.OrderID }
	viewAmount     = func(d *fuzzDoc) seenValue { return d.Amount }
	viewKind       = func(d *fuzzDoc) seenValue { return d.Kind }
	viewSKU        = func(d *fuzzDoc) seenValue { return d.SKU }
	viewItemID     = func(d *fuzzDoc) seenValue { return d.Item.ID }
	viewItemAmount = func(d *fuzzDoc) seenValue { return d.Item.Amount }
)

var fuzzConfigs = []fuzzConfig{
	{bodyOrderID, bodyAmount, fuzzPath{true, viewOrderID}, fuzzPath{true, viewAmount}},
	{"order_id", "amount", fuzzPath{false, viewOrderID}, fuzzPath{false, viewAmount}},
	{"order_id", bodyAmount, fuzzPath{false, viewOrderID}, fuzzPath{true, viewAmount}},
	{"kind", "sku", fuzzPath{false, viewKind}, fuzzPath{false, viewSKU}},
	{"powertools_json(body).kind", "powertools_json(body).sku", fuzzPath{true, viewKind}, fuzzPath{true, viewSKU}},
	{"item.id", "item.amount", fuzzPath{false, viewItemID}, fuzzPath{false, viewItemAmount}},
	{"powertools_json(body).item.id", "powertools_json(body).item.amount", fuzzPath{true, viewItemID}, fuzzPath{true, viewItemAmount}},
	{"powertools_json(body)", "amount", fuzzPath{inBody: true}, fuzzPath{false, viewAmount}},
	{"", bodyAmount, fuzzPath{}, fuzzPath{true, viewAmount}},
	// Expressions that build the objects they read: merge's defaults
	// must not hide a case variant, and a multi-select hash is keyed on
	// what its paths select.
	{"merge(`{\"order_id\":\"none\"}`, @).order_id", "{a: amount, s: sku}", fuzzPath{false, viewOrderIDOrNone}, fuzzPath{false, viewAmountAndSKU}},
	{"{o: order_id, k: kind}", "merge(@, `{\"x\":0}`).amount", fuzzPath{false, viewOrderIDAndKind}, fuzzPath{false, viewAmount}},
}

// viewOrderIDOrNone is what merge(`{"order_id":"none"}`, @).order_id must
// select: the struct's order_id, "none" without one, null for a null.
func viewOrderIDOrNone(d *fuzzDoc) seenValue {
	// merge keeps a null order_id over the default: no key. (Accepted
	// events hold one order_id at most: a null beside a value is refused.)
	if d.OrderID.raw == nil && !d.OrderID.null {
		return seenValue{raw: []byte(`"none"`)}
	}
	return d.OrderID
}

// viewAmountAndSKU is what {a: amount, s: sku} must select.
func viewAmountAndSKU(d *fuzzDoc) seenValue {
	return seenValue{raw: multiSelectHash("a", d.Amount, "s", d.SKU)}
}

// viewOrderIDAndKind is what {o: order_id, k: kind} must select.
func viewOrderIDAndKind(d *fuzzDoc) seenValue {
	return seenValue{raw: multiSelectHash("o", d.OrderID, "k", d.Kind)}
}

// multiSelectHash writes the JSON object of a multi-select hash: each name with its
// value, null for none.
func multiSelectHash(name1 string, v1 seenValue, name2 string, v2 seenValue) []byte {
	raw := func(v seenValue) []byte {
		if v.raw == nil {
			return []byte("null")
		}
		return v.raw
	}
	return fmt.Appendf(nil, `{%q:%s,%q:%s}`, name1, raw(v1), name2, raw(v2))
}

// fuzzPrefix is the key prefix of the fuzz target's handlers, and the
// name of its function wrappers, whose prefix it is outside Lambda.
const fuzzPrefix = "fuzz"

// fuzzEntry is an entry point into the middleware.
type fuzzEntry int

const (
	entryHandler fuzzEntry = iota // Wrap's handler, given the event
	entryRaw                      // WrapFunc of a json.RawMessage holding the event
	entryBody                     // WrapFunc of a struct holding the event's body as a string
)

var fuzzEntries = []fuzzEntry{entryHandler, entryRaw, entryBody}

func (e fuzzEntry) String() string {
	return [...]string{"Wrap", "WrapFunc(json.RawMessage)", "WrapFunc(struct{Body string})"}[e]
}

// bodyArg is entryBody's argument: the body of an API Gateway request or an
// SQS message, as a Go string.
type bodyArg struct {
	Body string `json:"body"`
}

// fuzzRun is one configuration's entry point and store, and what the
// user's code and the replay hook saw during the last invocation.
type fuzzRun struct {
	cfg      fuzzConfig
	store    *idempotencytest.Store
	invoke   func(event []byte) (read []byte, err error)
	ran      bool
	saw      fuzzDoc
	key      string
	keyed    bool
	replayed *idempotency.Record
}

func newFuzzRun(t *testing.T, entry fuzzEntry, cfg fuzzConfig) *fuzzRun {
	t.Helper()
	if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" {
		t.Skip("AWS_LAMBDA_FUNCTION_NAME is set: a function wrapper's key prefix would not be its name")
	}
	r := &fuzzRun{cfg: cfg, store: idempotencytest.NewStore()}
	ran := func(ctx context.Context, view []byte) {
		r.ran = true
		json.Unmarshal(view, &r.saw) // as check decodes it: see isTypeErrorOrNil
		r.key, r.keyed = idempotency.KeyFromContext(ctx)
	}
	opts := []idempotency.Option{
		idempotency.WithEventKey(cfg.key), idempotency.WithPayloadValidation(cfg.validation),
		idempotency.WithReplayHook(func(_ context.Context, out string, rec *idempotency.Record) (string, error) {
			cp := *rec
			r.replayed = &cp
			return out, nil
		}),
	}
	var err error
	switch entry {
	case entryHandler:
		var h *idempotency.Handler
		h, err = idempotency.New(r.store, func(ctx context.Context, ev json.RawMessage) (string, error) {
			ran(ctx, ev)
			return "ok", nil
		}, append(opts, idempotency.WithKeyPrefix(fuzzPrefix))...)
		r.invoke = func(event []byte) ([]byte, error) {
			_, err := h.Invoke(context.Background(), event)
			return event, err
		}
	case entryRaw:
		var f func(context.Context, json.RawMessage) (string, error)
		f, err = newFunc(fuzzPrefix, r.store, func(ctx context.Context, arg json.RawMessage) (string, error) {
			ran(ctx, arg)
			return "ok", nil
		}, opts...)
		r.invoke = func(event []byte) ([]byte, error) {
			_, err := f(context.Background(), event)
			return event, err
		}
	case entryBody:
		var f func(context.Context, bodyArg) (string, error)
		f, err = newFunc(fuzzPrefix, r.store, func(ctx context.Context, arg bodyArg) (string, error) {
			view, _ := json.Marshal(arg)
			ran(ctx, view)
			return "ok", nil
		}, opts...)
		// The argument is made from the event's body; the bytes that
		// stand for it are json.Marshal's.
		r.invoke = func(event []byte) ([]byte, error) {
			var arg bodyArg
			json.Unmarshal(event, &arg)
			read, _ := json.Marshal(arg)
			_, err := f(context.Background(), arg)
			return read, err
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", entry, err)
	}
	return r
}

// check invokes the entry point with event and compares the outcome with
// the user's view of what it was given.
func (r *fuzzRun) check(event []byte) error {
	r.ran, r.saw, r.key, r.keyed, r.replayed = false, fuzzDoc{}, "", false, nil
	before := r.store.Counts()
	event, err := r.invoke(event)
	after := r.store.Counts()

	var invalid *idempotency.InvalidEventError
	if errors.As(err, &invalid) {
		if r.ran || r.replayed != nil || after != before {
			return fmt.Errorf("refused (%v) after a run (%v), a replay (%v) or store calls (%+v, then %+v)", err, r.ran, r.replayed != nil, before, after)
		}
		return nil
	}
	var ev fuzzDoc
	if decErr := json.Unmarshal(event, &ev); !isTypeErrorOrNil(decErr) {
		return fmt.Errorf("an event that is not JSON (%v) got %v, want an *InvalidEventError", decErr, err)
	}
	if r.ran {
		ev = r.saw // the same, as the handler saw it
	}
	keyRaw, keyBroken := r.cfg.keyPath.view(event, &ev)
	hashRaw, hashBroken := r.cfg.hashPath.view(event, &ev)
	wantKey, keyed, keyAmbiguous := expectedKey(keyRaw, strings.HasPrefix(r.cfg.key, "{"))
	wantHash, hashAmbiguous := expectedHash(hashRaw)
	switch {
	case keyBroken:
		return fmt.Errorf("the key expression fails on the event, yet it was accepted (err %v)", err)
	case keyAmbiguous:
		return fmt.Errorf("the struct's key holds an object with names that fold alike, yet the event was accepted (err %v)", err)
	case !keyed:
		if after.Acquire != before.Acquire || r.keyed || r.replayed != nil {
			return fmt.Errorf("the struct holds no key, yet the middleware keyed the event (handler key %q, replay %v, err %v)", r.key, r.replayed != nil, err)
		}
		return nil
	case hashBroken:
		return fmt.Errorf("the validation expression fails on the event, yet it was accepted (err %v)", err)
	case hashAmbiguous:
		return fmt.Errorf("the struct's validated value holds an object with names that fold alike, yet the event was accepted (err %v)", err)
	case after.Acquire == before.Acquire:
		return fmt.Errorf("the struct holds key %s, yet the middleware ran without one (err %v)", wantKey, err)
	}
	if r.ran && r.key != wantKey {
		return fmt.Errorf("handler ran under key %s, the struct's view gives %s", r.key, wantKey)
	}
	if rec := r.replayed; rec != nil && (rec.Key != wantKey || rec.PayloadHash != wantHash) {
		return fmt.Errorf("replayed record %s (payload %s) for the struct's key %s (payload %s)", rec.Key, rec.PayloadHash, wantKey, wantHash)
	}
	var conflict *idempotency.PayloadConflictError
	if errors.As(err, &conflict) && (conflict.Key != wantKey || conflict.EventHash != wantHash) {
		return fmt.Errorf("payload conflict on %s with event hash %s; the struct's view gives %s, %s", conflict.Key, conflict.EventHash, wantKey, wantHash)
	}
	if r.ran && err == nil {
		rec, getErr := r.store.Get(context.Background(), wantKey)
		if getErr != nil || rec.PayloadHash != wantHash {
			return fmt.Errorf("record %+v, %v; want one with the struct's payload hash %s", rec, getErr, wantHash)
		}
	}
	return nil
}

// isTypeErrorOrNil reports whether json.Unmarshal returned err after
// filling every field it could: it skips a member of the wrong type and goes
// on, as it does for the handler.
func isTypeErrorOrNil(err error) bool {
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// expectedKey is the key the middleware must use for the value raw (nil for
// none), computed as the package documents it: the prefix, "#", and the hex
// SHA-256 of the value's canonical JSON. keyed is false for the values that
// count as no key; ambiguous reports an object, anywhere in raw, with two
// names that encoding/json would fill one struct field from.
func expectedKey(raw []byte, multi bool) (key string, keyed, ambiguous bool) {
	if raw == nil {
		return "", false, false
	}
	v, canon, ambiguous := canonicalValue(raw)
	if isMissingKey(v, multi) {
		return "", false, ambiguous
	}
	sum := sha256.Sum256(canon)
	return fuzzPrefix + "#" + hex.EncodeToString(sum[:]), true, ambiguous
}

// expectedHash is the payload hash of the value raw, that of null when raw
// is nil.
func expectedHash(raw []byte) (hash string, ambiguous bool) {
	canon := []byte("null")
	if raw != nil {
		_, canon, ambiguous = canonicalValue(raw)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), ambiguous
}

// canonicalValue decodes raw, valid JSON as encoding/json captured it, and
// writes it back in the canonical form of internal/keyformat: names sorted
// by their bytes at every depth, no whitespace, strings escaped as
// encoding/json escapes them without HTML escaping, numbers as written.
func canonicalValue(raw []byte) (v any, canon []byte, ambiguous bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, ambiguous = decodeNoting(d)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return v, bytes.TrimSuffix(buf.Bytes(), []byte("\n")), ambiguous
}

// decodeNoting decodes the next value of d, noting whether any object in it
// holds two names equal under the case folding of encoding/json, which is
// that of strings.EqualFold.
func decodeNoting(d *json.Decoder) (v any, ambiguous bool) {
	tok, err := d.Token()
	if err != nil {
		panic(err) // raw came from encoding/json: it is valid
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		var names []string
		for d.More() {
			tok, _ := d.Token()
			name := tok.(string)
			for _, seen := range names {
				ambiguous = ambiguous || strings.EqualFold(seen, name)
			}
			names = append(names, name)
			member, amb := decodeNoting(d)
			obj[name], ambiguous = member, ambiguous || amb
		}
		d.Token()
		return obj, ambiguous
	case json.Delim('['):
		arr := []any{}
		for d.More() {
			elem, amb := decodeNoting(d)
			arr, ambiguous = append(arr, elem), ambiguous || amb
		}
		d.Token()
		return arr, ambiguous
	}
	return tok, false
}

// isMissingKey is the package's rule for a value that is no key: null, "",
// [], {}, an array holding a null, or, for a multi-select hash (multi), an
// object holding one.
func isMissingKey(v any, multi bool) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		for _, e := range v {
			if e == nil {
				return true
			}
		}
		return len(v) == 0
	case map[string]any:
		for _, e := range v {
			if e == nil && multi {
				return true
			}
		}
		return len(v) == 0
	}
	return false
}

// eventGen writes JSON events from fuzz bytes, each byte read making one
// choice. Once the bytes run out every choice is the first, so any input
// makes events. The names are those on the paths of fuzzConfigs, each with
// case variants, ASCII and Unicode; the values come from small pools, so
// that events often share keys.
type eventGen struct {
	src []byte
	buf bytes.Buffer
}

func (g *eventGen) pick(n int) int {
	if len(g.src) == 0 {
		return 0
	}
	c := g.src[0]
	g.src = g.src[1:]
	return int(c) % n
}

// genNames lists each name with its variants under encoding/json's folding:
// U+212A (Kelvin sign) folds to k, U+017F (long s) to s.
var genNames = [][]string{
	{"order_id", "ORDER_ID", "Order_Id", "order_iD"},
	{"amount", "AMOUNT", "Amount"},
	{"kind", "KIND", "\u212aind", "\u212aIND"},
	{"sku", "SKU", "\u017fku", "\u017fKU"},
	{"item", "ITEM", "Item"},
	{"id", "ID", "iD"},
	{"body", "BODY", "Body"},
	{"x", "X"},
}

const (
	genItem = 4
	genBody = 6
)

var (
	genStrings = []string{`"A"`, `"B"`, `""`, `"a"`, `"\u0041"`}
	genNumbers = []string{`1`, `100`, `1.0`, `-0`, `999`}
	genArrays  = []string{`[]`, `[null]`, `["A"]`, `[1,"A"]`}
	genText    = []string{"a=1&b=2", "eyJvcmRlcl9pZCI6IkEifQ==", `{"order_id":"A"`, "5", "null"}
)

// event returns a new event: an object of generated members, most often
// with a body string holding a document made the same way.
func (g *eventGen) event() []byte {
	g.buf.Reset()
	g.buf.WriteByte('{')
	g.members(0)
	if g.pick(4) != 3 {
		g.buf.WriteString(`,"body":`)
		g.body()
	}
	g.buf.WriteByte('}')
	return bytes.Clone(g.buf.Bytes())
}

// members writes one to six members of an object, named from genNames,
// mostly with the exact name.
func (g *eventGen) members(depth int) {
	for i := range 1 + g.pick(6) {
		if i > 0 {
			g.buf.WriteByte(',')
		}
		base := g.pick(len(genNames))
		name := genNames[base][0]
		if g.pick(4) == 3 {
			name = genNames[base][g.pick(len(genNames[base]))]
		}
		g.name(name)
		g.buf.WriteByte(':')
		if g.pick(8) == 7 {
			g.buf.WriteByte(' ')
		}
		switch {
		case base == genBody && depth == 0 && g.pick(4) != 3:
			g.body()
		case base == genItem && depth < 3 && g.pick(4) != 3:
			g.object(depth + 1)
		default:
			g.value(depth + 1)
		}
	}
}

func (g *eventGen) object(depth int) {
	g.buf.WriteByte('{')
	g.members(depth)
	g.buf.WriteByte('}')
}

// name writes name as a JSON string, sometimes with every character
// escaped, which must not change what it matches.
func (g *eventGen) name(name string) {
	if g.pick(4) != 3 {
		b, _ := json.Marshal(name)
		g.buf.Write(b)
		return
	}
	g.buf.WriteByte('"')
	for _, r := range name {
		fmt.Fprintf(&g.buf, `\u%04x`, r)
	}
	g.buf.WriteByte('"')
}

// body writes a string holding a generated document, as API Gateway does,
// drawing on the same bytes.
func (g *eventGen) body() {
	doc := &eventGen{src: g.src}
	doc.object(1)
	g.src = doc.src
	b, _ := json.Marshal(doc.buf.String())
	g.buf.Write(b)
}

func (g *eventGen) value(depth int) {
	switch g.pick(8) {
	case 0:
		g.buf.WriteString(genStrings[g.pick(len(genStrings))])
	case 1:
		g.buf.WriteString(genNumbers[g.pick(len(genNumbers))])
	case 2:
		g.buf.WriteString("null")
	case 3:
		g.buf.WriteString([]string{"true", "false"}[g.pick(2)])
	case 4:
		if depth < 3 {
			g.object(depth)
			return
		}
		g.buf.WriteString("{}")
	case 5:
		g.buf.WriteString(genArrays[g.pick(len(genArrays))])
	case 6:
		b, _ := json.Marshal(genText[g.pick(len(genText))])
		g.buf.Write(b)
	case 7:
		g.buf.WriteString(`"B"`)
	}
}

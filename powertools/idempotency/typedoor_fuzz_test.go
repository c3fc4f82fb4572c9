package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// FuzzTypeDoor is a differential test of the middleware against
// encoding/json, over a menu of declared handler types (types with
// methods cannot be built at run time): for generated events, two that
// the middleware gives one key and one payload hash must decode, by
// json.Unmarshal into the handler's type, into values that are
// reflect.DeepEqual where the key and the validation read, or one of them
// must be refused (by the middleware, or by the decoding). Each case's
// project says, by hand from the type, what its expressions read; the
// cases that validate "@" compare the whole value.
//
// The input picks a case and a format, and gives two events and a program
// for more (doorGen), from the case's names and a few values.
func FuzzTypeDoor(f *testing.F) {
	for i := range doorCases {
		for _, seed := range doorCases[i].seeds {
			f.Add(uint8(i), uint8(0), seed[0], seed[1], []byte(nil))
			f.Add(uint8(i), uint8(1), seed[0], seed[1], []byte(nil))
		}
		f.Add(uint8(i), uint8(0), "", "", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	}
	f.Fuzz(func(t *testing.T, which, mode uint8, first, second string, program []byte) {
		c := &doorCases[int(which)%len(doorCases)]
		compat := []idempotency.Compatibility{idempotency.OwnFormat, idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript}[int(mode)%3]
		h := c.handler(t, compat)
		evs := []string{first, second}
		g := &doorGen{src: program, names: c.names}
		for n := g.pick(4); n > 0; n-- {
			evs = append(evs, g.object(3))
		}
		type seen struct {
			event, key, hash string
			value            any
		}
		var accepted []seen
		for _, ev := range evs {
			if ev == "" {
				continue
			}
			key, hash, err := h.KeyOf([]byte(ev))
			if err != nil {
				if !isA[*idempotency.InvalidEventError](err) {
					t.Fatalf("%s, %v: event %s: %v, want an InvalidEventError", c.name, compat, ev, err)
				}
				continue
			}
			if key == "" {
				continue // no key: the handler runs, as it would without idempotency
			}
			value, err := c.project([]byte(ev))
			if err != nil {
				continue // the handler refuses it
			}
			for _, s := range accepted {
				if s.key == key && s.hash == hash && !reflect.DeepEqual(s.value, value) {
					t.Fatalf("%s, %v (key %s, validation %s): events\n%s\n%s\nshare key %s and hash %s, and the handler reads\n%#v\n%#v", c.name, compat, c.key, c.validation, s.event, ev, key, hash, s.value, value)
				}
			}
			accepted = append(accepted, seen{ev, key, hash, value})
		}
	})
}

// doorCase is a handler type with a key and a validation expression.
type doorCase struct {
	name            string
	key, validation string
	// build builds a handler over the case's type.
	build func(opts ...idempotency.Option) (*idempotency.Handler, error)
	// project decodes an event into the case's type, with json.Unmarshal,
	// and returns what the key and the validation read of it.
	project func([]byte) (any, error)
	names   []string // the member names the generator uses
	seeds   [][2]string

	mu       sync.Mutex
	handlers map[idempotency.Compatibility]*idempotency.Handler
}

// handler returns the case's handler in mode compat, built once.
func (c *doorCase) handler(t *testing.T, compat idempotency.Compatibility) *idempotency.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.handlers[compat]; h != nil {
		return h
	}
	opts := []idempotency.Option{idempotency.WithKeyPrefix("door"), idempotency.WithCompatibility(compat), idempotency.WithEventKey(c.key)}
	if c.validation != "" {
		opts = append(opts, idempotency.WithPayloadValidation(c.validation))
	}
	h, err := c.build(opts...)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	if c.handlers == nil {
		c.handlers = map[idempotency.Compatibility]*idempotency.Handler{}
	}
	c.handlers[compat] = h
	return h
}

// handlerOf returns a builder of handlers over T.
func handlerOf[T any]() func(...idempotency.Option) (*idempotency.Handler, error) {
	return func(opts ...idempotency.Option) (*idempotency.Handler, error) {
		return idempotency.New(idempotencytest.NewStore(), func(context.Context, T) (string, error) { return "", nil }, opts...)
	}
}

// projectOf returns a projection over T: the event decoded by
// json.Unmarshal, then what read takes of it.
func projectOf[T any](read func(*T) any) func([]byte) (any, error) {
	return func(ev []byte) (any, error) {
		var v T
		if err := json.Unmarshal(ev, &v); err != nil {
			return nil, err
		}
		return read(&v), nil
	}
}

// entry is a map's entry for a projection: absent, or present with its
// value.
type entry struct {
	Present bool
	Value   any
}

func entryOf[K comparable, V any](m map[K]V, k K) entry {
	v, ok := m[k]
	return entry{ok, v}
}

// rawValue is a json.RawMessage for a projection: text the handler
// decodes itself, compared as the value encoding/json gives it (numbers
// as float64), as a handler that decodes it into its own types reads it
// (nil: none). A Powertools mode hashes the spellings of one double
// alike (0 and -0, 1.0 and 1.00), as Powertools does.
func rawValue(r json.RawMessage) any {
	if r == nil {
		return entry{}
	}
	var v any
	if err := json.Unmarshal(r, &v); err != nil {
		return fmt.Sprintf("undecodable %s", r)
	}
	return entry{true, v}
}

// The menu's types.
type (
	doorInts struct {
		ID  string          `json:"id"`
		Qty map[int]int64   `json:"qty"`
		U   map[uint16]bool `json:"u"`
	}
	doorAddrs struct {
		ID    string             `json:"id"`
		Hosts map[netip.Addr]int `json:"hosts"`
	}
	doorRaw struct {
		ID    string          `json:"id"`
		Email json.RawMessage `json:"email"`
		Name  *string         `json:"name"`
	}
	doorBase struct {
		ID   string `json:"id"`
		Kind string
	}
	doorEmbedded struct {
		doorBase
		Extra *doorBase        `json:"extra"`
		Tags  map[string]int64 `json:"tags"`
	}
	// doorTemp decodes itself, computing F from C, as aws-lambda-go's
	// S3Object computes URLDecodedKey from Key.
	doorTemp struct {
		C float64 `json:"c"`
		F float64 `json:"f"`
	}
	doorWeather struct {
		ID   string              `json:"id"`
		Temp doorTemp            `json:"temp"`
		Ptr  *doorTemp           `json:"ptr"`
		All  map[string]doorTemp `json:"all"`
	}
	doorItems struct {
		ID    string `json:"id"`
		Items []struct {
			Qty map[int8]string `json:"qty"`
		} `json:"items"`
	}
)

func (t *doorTemp) UnmarshalJSON(b []byte) error {
	var raw struct {
		C float64 `json:"c"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*t = doorTemp{C: raw.C, F: raw.C*9/5 + 32}
	return nil
}

var doorCases = []doorCase{
	{
		name: "int keys, looked up", key: "id", validation: `qty."1"`,
		build:   handlerOf[doorInts](),
		project: projectOf(func(v *doorInts) any { return []any{v.ID, entryOf(v.Qty, 1)} }),
		names:   []string{"id", "qty", "1", "01", "+1", "-0", "0", "001", "2"},
		seeds:   [][2]string{{`{"id":"a","qty":{"1":1}}`, `{"id":"a","qty":{"1":1,"01":999}}`}, {`{"id":"a"}`, `{"id":"a","qty":{"01":999}}`}},
	},
	{
		name: "int keys, whole", key: "id", validation: "@",
		build:   handlerOf[doorInts](),
		project: projectOf(func(v *doorInts) any { return *v }),
		names:   []string{"id", "qty", "u", "1", "01", "+1", "-0", "0", "7", "07"},
		seeds:   [][2]string{{`{"id":"a","qty":{"1":1,"01":2}}`, `{"id":"a","qty":{"01":2,"1":1}}`}, {`{"id":"a","u":{"7":true}}`, `{"id":"a","u":{"07":true}}`}},
	},
	{
		name: "uint keys, a key", key: `u."7"`, validation: "qty",
		build:   handlerOf[doorInts](),
		project: projectOf(func(v *doorInts) any { return []any{entryOf(v.U, 7), v.Qty} }),
		names:   []string{"u", "qty", "7", "07", "+7", "1", "01"},
		seeds:   [][2]string{{`{"u":{"7":true},"qty":{"1":1}}`, `{"u":{"07":false,"7":true},"qty":{"1":1}}`}},
	},
	{
		name: "TextUnmarshaler keys", key: "id", validation: `hosts."2001:db8::1"`,
		build:   handlerOf[doorAddrs](),
		project: projectOf(func(v *doorAddrs) any { return []any{v.ID, entryOf(v.Hosts, netip.MustParseAddr("2001:db8::1"))} }),
		names:   []string{"id", "hosts", "2001:db8::1", "2001:0db8::1", "2001:db8:0::1", "2001:DB8::1", "::1"},
		seeds:   [][2]string{{`{"id":"a","hosts":{"2001:db8::1":1}}`, `{"id":"a","hosts":{"2001:db8::1":1,"2001:0db8:0::1":999}}`}},
	},
	{
		name: "TextUnmarshaler keys, whole", key: "id", validation: "hosts",
		build:   handlerOf[doorAddrs](),
		project: projectOf(func(v *doorAddrs) any { return []any{v.ID, v.Hosts} }),
		names:   []string{"id", "hosts", "::1", "0::1", "::0:1", "1.2.3.4"},
		seeds:   [][2]string{{`{"id":"a","hosts":{"::1":1,"0::1":2}}`, `{"id":"a","hosts":{"0::1":2,"::1":1}}`}},
	},
	{
		name: "json.RawMessage and a pointer", key: "id", validation: "[email, name]",
		build:   handlerOf[doorRaw](),
		project: projectOf(func(v *doorRaw) any { return []any{v.ID, rawValue(v.Email), v.Name} }),
		names:   []string{"id", "email", "name"},
		seeds:   [][2]string{{`{"id":"a"}`, `{"id":"a","email":null}`}, {`{"id":"a","name":null}`, `{"id":"a"}`}},
	},
	{
		name: "json.RawMessage, whole", key: "email", validation: "email",
		build:   handlerOf[doorRaw](),
		project: projectOf(func(v *doorRaw) any { return rawValue(v.Email) }),
		names:   []string{"email", "a", "b"},
		seeds:   [][2]string{{`{"email":{"a":1,"b":2}}`, `{"email":{"b":2,"a":1}}`}},
	},
	{
		name: "embedded structs", key: "id", validation: "@",
		build:   handlerOf[doorEmbedded](),
		project: projectOf(func(v *doorEmbedded) any { return *v }),
		names:   []string{"id", "Kind", "kind", "extra", "tags", "ID"},
		seeds:   [][2]string{{`{"id":"a","Kind":"k"}`, `{"id":"a","kind":"k"}`}},
	},
	{
		name: "map entries", key: "id", validation: "{t: tags.x, k: Kind}",
		build:   handlerOf[doorEmbedded](),
		project: projectOf(func(v *doorEmbedded) any { return []any{v.ID, entryOf(v.Tags, "x"), v.Kind} }),
		names:   []string{"id", "Kind", "tags", "x", "X"},
		seeds:   [][2]string{{`{"id":"a","tags":{}}`, `{"id":"a","tags":{"x":null}}`}},
	},
	{
		name: "a value that decodes itself", key: "id", validation: "temp.f",
		build:   handlerOf[doorWeather](),
		project: projectOf(func(v *doorWeather) any { return []any{v.ID, v.Temp.F} }),
		names:   []string{"id", "temp", "c", "f"},
		seeds:   [][2]string{{`{"id":"a","temp":{"c":100,"f":1}}`, `{"id":"a","temp":{"c":0,"f":1}}`}, {`{"id":"a","temp":{}}`, `{"id":"a"}`}, {`{"id":"a","temp":null}`, `{"id":"a"}`}},
	},
	{
		name: "values that decode themselves, in a map and behind a pointer", key: "id", validation: "[all.x.f, ptr.f]",
		build: handlerOf[doorWeather](),
		project: projectOf(func(v *doorWeather) any {
			var ptr any
			if v.Ptr != nil {
				ptr = v.Ptr.F
			}
			t, ok := v.All["x"]
			return []any{v.ID, ok, t.F, ptr}
		}),
		names: []string{"id", "all", "ptr", "x", "c", "f"},
		seeds: [][2]string{{`{"id":"a","all":{"x":{"c":1}},"ptr":null}`, `{"id":"a","all":{"x":{"c":1}}}`}},
	},
	{
		name: "a map in each element", key: "id", validation: "items[*].qty",
		build: handlerOf[doorItems](),
		project: projectOf(func(v *doorItems) any {
			var out []any
			for _, it := range v.Items {
				if it.Qty != nil {
					out = append(out, it.Qty)
				}
			}
			return []any{v.ID, out}
		}),
		names: []string{"id", "items", "qty", "1", "01", "-1", "-01"},
		seeds: [][2]string{{`{"id":"a","items":[{"qty":{"1":"x","01":"y"}}]}`, `{"id":"a","items":[{"qty":{"01":"y","1":"x"}}]}`}},
	},
	{
		name: "an element of a slice", key: "id", validation: "items[1]",
		build: handlerOf[doorItems](),
		project: projectOf(func(v *doorItems) any {
			if len(v.Items) < 2 {
				return []any{v.ID}
			}
			return []any{v.ID, v.Items[1]}
		}),
		names: []string{"id", "items", "qty", "1", "01"},
		seeds: [][2]string{{`{"id":"a","items":[{}]}`, `{"id":"a","items":[{},null]}`}},
	},
	{
		name: "any, from a map", key: "id", validation: "[email, p.email]",
		build: handlerOf[map[string]any](),
		project: projectOf(func(v *map[string]any) any {
			p, _ := (*v)["p"].(map[string]any)
			return []any{(*v)["id"], entryOf(*v, "email"), entryOf(p, "email")}
		}),
		names: []string{"id", "email", "p"},
		seeds: [][2]string{{`{"id":"a","p":{}}`, `{"id":"a","p":{"email":null}}`}},
	},
}

// doorGen generates events from a program: objects whose member names
// come from the case's names, and a few values.
type doorGen struct {
	src   []byte
	names []string
}

func (g *doorGen) pick(n int) int {
	if len(g.src) == 0 {
		return 0
	}
	c := g.src[0]
	g.src = g.src[1:]
	return int(c) % n
}

var doorLeaves = []string{`"a"`, `"b"`, `"\u0061"`, `1`, `1.0`, `100`, `1e2`, `-0`, `0`, `true`, `null`, `"1"`, `"x"`}

// object returns a JSON object, nesting down to depth.
func (g *doorGen) object(depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := 0, 1+g.pick(4); i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(g.names[g.pick(len(g.names))])
		b.Write(name)
		b.WriteByte(':')
		b.WriteString(g.value(depth - 1))
	}
	b.WriteByte('}')
	return b.String()
}

func (g *doorGen) value(depth int) string {
	switch k := g.pick(6); {
	case depth > 0 && k < 2:
		return g.object(depth)
	case depth > 0 && k == 2:
		var parts []string
		for i, n := 0, g.pick(3); i <= n; i++ {
			parts = append(parts, g.value(depth-1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return doorLeaves[g.pick(len(doorLeaves))]
}

// TestTypeDoorCasesBuild checks that every case of the type door's fuzz
// target builds in every format, and reads or refuses its seeds with the
// errors Invoke gives.
func TestTypeDoorCasesBuild(t *testing.T) {
	t.Parallel()
	for i := range doorCases {
		c := &doorCases[i]
		for _, compat := range []idempotency.Compatibility{idempotency.OwnFormat, idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript} {
			h := c.handler(t, compat)
			for _, seed := range c.seeds {
				for _, ev := range seed {
					if _, _, err := h.KeyOf([]byte(ev)); err != nil && !errors.As(err, new(*idempotency.InvalidEventError)) {
						t.Errorf("%s, %v: %s: %v", c.name, compat, ev, err)
					}
				}
			}
		}
	}
}

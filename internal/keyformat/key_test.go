package keyformat

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, `null`},
		{"bools", []any{true, false}, `[true,false]`},
		{"number kept as written", json.Number("1.50"), `1.50`},
		{"exponent kept as written", json.Number("1e3"), `1e3`},
		{"float as encoding/json writes it", 1.5, `1.5`},
		{"int", 42, `42`},
		{"keys sorted at every depth", map[string]any{"b": 1, "a": map[string]any{"d": nil, "c": []any{"x"}}}, `{"a":{"c":["x"],"d":null},"b":1}`},
		{"keys sorted by bytes", map[string]any{"é": 1, "z": 2, "Z": 3}, `{"Z":3,"z":2,"é":1}`},
		{"no HTML escaping", "<a&b>", `"<a&b>"`},
		{"escapes", "q\"\\\n\r\t\b\f\x01", `"q\"\\\n\r\t\b\f\u0001"`},
		{"line separators escaped", "a\u2028b\u2029", `"a\u2028b\u2029"`},
		{"non-ASCII kept", "日本", `"日本"`},
		// Past the first words of eight plain bytes, crossed whole.
		{"plain words", "ord-0000000000000001", `"ord-0000000000000001"`},
		{"escape after a word", "12345678\"9\x01", `"12345678\"9\u0001"`},
		{"backslash after two words", "abcdefghijklmnop\\", `"abcdefghijklmnop\\"`},
		{"non-ASCII after a word", "abcdefgh\u2028é", `"abcdefgh\u2028é"`},
		{"other Go values go through encoding/json", struct {
			B int `json:"b"`
			A int `json:"a"`
		}{1, 2}, `{"a":2,"b":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := canonical(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCanonicalJSONRejectsWhatJSONCannotHold(t *testing.T) {
	t.Parallel()
	for _, v := range []any{json.Number("1 2"), json.Number(`"1"`), json.Number("[1]"), make(chan int), "a\xffb"} {
		if _, err := canonical(v); err == nil {
			t.Errorf("canonical(%#v) succeeded, want an error", v)
		}
	}
}

// FuzzCanonicalJSON checks that the canonical form of any JSON document is
// what encoding/json writes for its value, valid JSON and a fixed point:
// canonicalising it again changes nothing, so every way of writing a
// value leads to one key.
func FuzzCanonicalJSON(f *testing.F) {
	for _, seed := range []string{`{"b":1,"a":[true,null,"x"]}`, `"a\u2028<>&\"\\"`, `1.50e+3`, `[{}, [], ""]`, "\"\xff\"",
		`["ord-1",4200,"EUR",-0,true,null]`, `[[1]]`, "\"~\x7f\"", `"<a href='x'>&</a>"`, `"say \"hi\""`, `"a\\b"`, `-10`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := decodeJSON(raw)
		if err != nil {
			return
		}
		once, err := canonical(v)
		if err != nil {
			t.Fatalf("canonical form of %q: %v", raw, err)
		}
		// Written a piece at a time, it is what encoding/json writes.
		if whole, err := Encode(v); err != nil || string(whole) != string(once) {
			t.Fatalf("canonical form of %q: %q; encoding/json writes %q, %v", raw, once, whole, err)
		}
		// Read back, it is the same value: nothing dropped or changed.
		again, err := decodeJSON(once)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, v) {
			t.Fatalf("canonical form %q of %q reads back as %#v, not %#v", once, raw, again, v)
		}
		twice, err := canonical(again)
		if err != nil {
			t.Fatal(err)
		}
		if string(once) != string(twice) {
			t.Fatalf("not a fixed point: %q then %q", once, twice)
		}
	})
}

// BenchmarkKeyFormat is the hashing of a first call on the 2.2 KB event
// of the middleware's benchmark: the key from the order id, and the payload hash
// of [amount, currency].
func BenchmarkKeyFormat(b *testing.B) {
	var f Format
	var key, validated any = "ord-000000000001", []any{json.Number("4200"), "EUR"}
	b.Run("key", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.Key("orders", key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("payload_hash", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.Digest(validated); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestKeyFor(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte(`"o-1"`))
	want := "p#" + hex.EncodeToString(sum[:])
	if key, err := (Format{}).Key("p", "o-1"); err != nil || key != want {
		t.Errorf("Format{}.Key = %q, %v; want %q", key, err, want)
	}
}

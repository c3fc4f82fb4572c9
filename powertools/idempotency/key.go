package idempotency

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// In this library's own format (OwnFormat), the key and the payload hash
// are SHA-256 digests (by default: see WithHash) of the selected value's
// canonical JSON, so that two events that differ only in object key order
// or whitespace share a key. Canonical here is what encoding/json writes
// for the decoded value with HTML escaping off: object keys sorted by
// their UTF-8 bytes, at every depth; no insignificant whitespace; numbers
// kept as written (json.Number), so 1 and 1.0 are different keys, as they
// are different text in the event. FuzzCanonicalJSON checks it against
// encoding/json's own output, and that it holds the whole value and is a
// fixed point. The Powertools compatibility modes
// hash another text instead: see python.go and typescript.go.

// missing reports whether v, what the key expression selected, counts as
// no key at all: null, "", [], {}, an array holding a null, or, when the
// expression is a multi-select (multi), an object holding a null. 0 and
// false are keys: a caller may well number its requests from zero. An
// array or object with a null is what a multi-select key such as
// [customer_id, order_id] or {c: customer_id, o: order_id} gives when one
// of its paths is absent; the others alone would key the event, and a
// customer's second order would get the first one's response. An object
// that the expression selects as it is in the event (the whole event, say)
// may hold nulls of its own, and is a key.
func missing(v any, multi bool) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0 || slices.Contains(v, nil)
	case map[string]any:
		if multi {
			for _, m := range v {
				if m == nil {
					return true
				}
			}
		}
		return len(v) == 0
	}
	return false
}

// canonical returns v's canonical JSON. A value that is not made of what
// encoding/json decodes (a struct that a custom function returned, say)
// is read back first, so that it hashes as that decoded value does, its
// fields in key order.
func canonical(v any) ([]byte, error) { return appendCanonical(nil, v) }

// appendCanonical appends v's canonical JSON to dst. What keys and
// validated payloads mostly are, a string of printable ASCII, an integer,
// true, false, null or a list of these (`[amount, currency]`), it writes
// itself, as encoding/json writes them: through encoding/json's encoder
// a key or a payload hash took 600-800 ns and 6 allocations, against
// 250-300 ns and one now, on every call (BenchmarkKeyFormat).
// Anything else goes through encoding/json. FuzzCanonicalJSON holds the
// two to the same bytes.
func appendCanonical(dst []byte, v any) ([]byte, error) {
	if out, ok := appendSimple(dst, v, true); ok {
		return out, nil
	}
	v, err := asDecoded(v)
	if err != nil {
		return nil, err
	}
	b, err := encodeCanonical(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// asDecoded returns v as encoding/json decodes it: v itself when it is
// made of what encoding/json decodes, else v read back from its canonical
// JSON (a struct becomes an object, its fields in key order).
func asDecoded(v any) (any, error) {
	if decoded(v) {
		return v, nil
	}
	b, err := encodeCanonical(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// appendSimple appends v when it is a simple value (see appendCanonical),
// or, when list is true, a list of them, and reports whether it was.
func appendSimple(dst []byte, v any, list bool) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		for i := range len(v) {
			// encoding/json writes these bytes as they are; it escapes
			// the others, or checks their UTF-8.
			if c := v[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
				return dst, false
			}
		}
		dst = append(dst, '"')
		dst = append(dst, v...)
		return append(dst, '"'), true
	case json.Number:
		if !isInteger(string(v)) {
			return dst, false
		}
		return append(dst, v...), true
	case []any:
		if !list {
			return dst, false
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendSimple(dst, e, false); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

// isInteger reports whether n is a JSON integer: -?(0|[1-9][0-9]*).
func isInteger(n string) bool {
	n = strings.TrimPrefix(n, "-")
	if n == "" || n[0] == '0' && len(n) > 1 {
		return false
	}
	for i := range len(n) {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// decoded reports whether v is made only of the values encoding/json
// decodes into an any with UseNumber.
func decoded(v any) bool {
	switch v := v.(type) {
	case nil, bool, string, json.Number, float64:
		return true
	case []any:
		return !slices.ContainsFunc(v, func(e any) bool { return !decoded(e) })
	case map[string]any:
		for _, e := range v {
			if !decoded(e) {
				return false
			}
		}
		return true
	}
	return false
}

// encodeCanonical writes v as encoding/json does, without HTML escaping.
func encodeCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// keyFormat makes the keys and the payload hashes of a wrapper: which
// serialisation of the selected value is hashed, with which hash, and how
// the digest is written. The zero value is this library's own format:
// canonical JSON, SHA-256, hex.
type keyFormat struct {
	compat Compatibility
	hash   crypto.Hash // 0: the default of compat
}

// hashValue returns the digest of v's serialisation: the payload hash,
// and the part of the key after "#".
func (f keyFormat) hashValue(v any) (string, error) {
	var buf [64]byte
	b, err := f.appendDigest(buf[:0], v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// key returns prefix + "#" + f.hashValue(v).
func (f keyFormat) key(prefix string, v any) (string, error) {
	var buf [128]byte
	b, err := f.appendDigest(append(append(buf[:0], prefix...), '#'), v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendDigest appends the digest of v's serialisation to dst, written as
// f writes it. The text and the digest stay on the stack: this runs twice
// on every call with payload validation on.
func (f keyFormat) appendDigest(dst []byte, v any) ([]byte, error) {
	var buf [256]byte
	text, err := f.serialize(buf[:0], v)
	if err != nil {
		return nil, err
	}
	h := f.hash
	if h == 0 {
		h = f.compat.defaultHash()
	}
	var sum []byte
	if h == crypto.SHA256 {
		s := sha256.Sum256(text)
		sum = s[:]
	} else {
		sum = digest(h, text)
	}
	if f.compat == PowertoolsTypeScript {
		return base64.StdEncoding.AppendEncode(dst, sum), nil // hash.digest('base64')
	}
	return hex.AppendEncode(dst, sum), nil
}

// digest returns the digest of text by h, a hash other than SHA-256.
func digest(h crypto.Hash, text []byte) []byte {
	d := h.New()
	d.Write(bytes.Clone(text)) // so that the caller's text need not escape to the heap
	return d.Sum(nil)
}

// serialize appends to dst the text of v that f hashes. A value that is
// not made of what encoding/json decodes is read back from its canonical
// JSON first, as canonical does.
func (f keyFormat) serialize(dst []byte, v any) ([]byte, error) {
	switch f.compat {
	case PowertoolsPython, PowertoolsTypeScript:
	default:
		return appendCanonical(dst, v)
	}
	v, err := asDecoded(v)
	if err != nil {
		return nil, err
	}
	if f.compat == PowertoolsPython {
		return appendPython(dst, v)
	}
	return appendTypeScript(dst, v)
}

// decodeJSON decodes raw JSON keeping numbers as written: a function
// wrapper's argument, as json.Marshal encoded it.
func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("idempotency: trailing data after the JSON value")
	}
	return v, nil
}

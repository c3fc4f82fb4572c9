package idempotency

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
)

// In this library's own format (OwnFormat), the key and the payload hash
// are SHA-256 digests (by default: see WithHash) of the selected value's
// canonical JSON, so that two events that differ only in object key order
// or whitespace share a key. Canonical here is what encoding/json writes
// for the decoded value with HTML escaping off: object keys sorted by
// their UTF-8 bytes, at every depth; no insignificant whitespace; numbers
// kept as written (json.Number), so 1 and 1.0 are different keys, as they
// are different text in the event. FuzzCanonicalJSON checks that it holds
// the whole value and is a fixed point. The Powertools compatibility modes
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
func canonical(v any) ([]byte, error) {
	b, err := encodeCanonical(v)
	if err != nil || decoded(v) {
		return b, err
	}
	if v, err = decodeJSON(b); err != nil {
		return nil, err
	}
	return encodeCanonical(v)
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
	b, err := f.serialize(v)
	if err != nil {
		return "", err
	}
	h := f.hash
	if h == 0 {
		h = f.compat.defaultHash()
	}
	d := h.New()
	d.Write(b)
	sum := d.Sum(nil)
	if f.compat == PowertoolsTypeScript {
		return base64.StdEncoding.EncodeToString(sum), nil // hash.digest('base64')
	}
	return hex.EncodeToString(sum), nil
}

// key returns prefix + "#" + f.hashValue(v).
func (f keyFormat) key(prefix string, v any) (string, error) {
	h, err := f.hashValue(v)
	if err != nil {
		return "", err
	}
	return prefix + "#" + h, nil
}

// serialize returns the text of v that f hashes. A value that is not made
// of what encoding/json decodes is read back from its canonical JSON
// first, as canonical does.
func (f keyFormat) serialize(v any) ([]byte, error) {
	switch f.compat {
	case PowertoolsPython, PowertoolsTypeScript:
	default:
		return canonical(v)
	}
	if !decoded(v) {
		b, err := encodeCanonical(v)
		if err != nil {
			return nil, err
		}
		if v, err = decodeJSON(b); err != nil {
			return nil, err
		}
	}
	if f.compat == PowertoolsPython {
		return appendPython(nil, v)
	}
	return appendTypeScript(nil, v)
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

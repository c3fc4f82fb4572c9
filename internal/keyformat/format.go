// Package keyformat makes the idempotency keys and payload hashes of
// github.com/gopowertools/lambda/powertools/idempotency: the text of the
// selected value that is hashed, the hash, and how the digest is written,
// in the library's own format and in those of Powertools for AWS Lambda
// (Python and TypeScript), whose records a Go function can share.
//
// In the library's own format, the key and the payload hash are SHA-256
// digests (by default) of the selected value's canonical JSON, so that two
// events that differ only in object key order or whitespace share a key.
// Canonical here is what encoding/json writes for the decoded value with
// HTML escaping off: object keys sorted by their UTF-8 bytes, at every
// depth; no insignificant whitespace; numbers kept as written
// (json.Number), so 1 and 1.0 are different keys, as they are different
// text in the event. A fuzz test checks that it is what encoding/json
// writes, holds the whole value and is a fixed point. The Powertools
// modes hash another text, as Python and TypeScript write it.
// In every format, a string that is not UTF-8 is refused, since each
// would write it as U+FFFD.
package keyformat

import (
	"bytes"
	"context"
	"crypto"
	_ "crypto/md5" // the hashes a Format accepts
	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Mode is the format of keys and records: the values of
// idempotency.Compatibility.
type Mode int

const (
	Own Mode = iota
	Python
	TypeScript
)

// Format makes the keys and payload hashes of a wrapper. The zero value is
// the library's own format: canonical JSON, SHA-256, hex.
type Format struct {
	Mode Mode
	Hash crypto.Hash // 0: the mode's default
}

// modeKey is the context key of an invocation's mode.
type modeKey struct{}

// WithMode returns ctx carrying the mode of the invocation it belongs to,
// for a store that keeps records as a Powertools runtime does: every Store
// method is called with it.
func WithMode(ctx context.Context, m Mode) context.Context {
	return context.WithValue(ctx, modeKey{}, m)
}

// ModeOf returns the mode WithMode gave ctx: Own outside an invocation.
func ModeOf(ctx context.Context) Mode {
	m, _ := ctx.Value(modeKey{}).(Mode)
	return m
}

// defaultHash is the hash of a mode when none is given: SHA-256 in the
// library's own format, Powertools' default, MD5, in its modes
// (hash_function, hashFunction).
func defaultHash(m Mode) crypto.Hash {
	if m == Own {
		return crypto.SHA256
	}
	return crypto.MD5
}

// Digest returns the digest of v's text: the payload hash, and the part
// of the key after "#". v is what a JMESPath search returns on a decoded
// event, or any value encoding/json can encode. The text goes to the hash
// a piece at a time (see textWriter). A string that is not UTF-8 is
// refused with an *InvalidTextError.
func (f Format) Digest(v any) (string, error) {
	h := f.Hash
	if h == 0 {
		h = defaultHash(f.Mode)
	}
	d := h.New()
	if err := f.write(d, v); err != nil {
		return "", err
	}
	sum := d.Sum(nil)
	if f.Mode == TypeScript {
		return base64.StdEncoding.EncodeToString(sum), nil // hash.digest('base64')
	}
	return hex.EncodeToString(sum), nil
}

// Key returns prefix + "#" + f.Digest(v).
func (f Format) Key(prefix string, v any) (string, error) {
	d, err := f.Digest(v)
	if err != nil {
		return "", err
	}
	return prefix + "#" + d, nil
}

// Nulls is a selected value whose nulls at At stand for members that the
// event holds as null where the reader of the event tells a null member
// from an absent one (a json.RawMessage field, a map's entry): At lists
// them by their place in Value (nil: Value itself; an int: an element of
// a list; a string: a member of an object). Its text differs from
// Value's, so that a payload hash tells "email": null from no e-mail;
// only the own format has one (a Powertools runtime hashes both as null).
type Nulls struct {
	Value any
	At    []any
}

// write writes the text of v that f hashes to w.
func (f Format) write(w io.Writer, v any) error {
	if n, ok := v.(Nulls); ok {
		return f.writeNulls(w, n)
	}
	v, err := asDecoded(v)
	if err != nil {
		return err
	}
	t := textWriter{w: w}
	switch f.Mode {
	case Python:
		err = t.python(v)
	case TypeScript:
		err = t.typeScript(v)
	default:
		err = t.canonical(v)
	}
	if err == nil {
		t.flush()
	}
	return err
}

// text returns the text of v that f hashes.
func (f Format) text(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := f.write(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeNulls writes the text of n: a NUL byte, which starts no JSON
// text, the canonical JSON of n.At, then the text of n.Value. A JSON
// array ends where its text says, so no two Nulls share a text, nor a
// Nulls and a value.
func (f Format) writeNulls(w io.Writer, n Nulls) error {
	if f.Mode != Own {
		return errors.New("keyformat: a Powertools runtime hashes a null member as an absent one")
	}
	at, err := Encode(n.At)
	if err != nil {
		return err
	}
	if _, err := w.Write(append([]byte{0}, at...)); err != nil {
		return err
	}
	return f.write(w, n.Value)
}

// canonical returns v's canonical JSON: what encoding/json writes for the
// value it decodes from v (see asDecoded), without HTML escaping, which
// sorts object keys by their UTF-8 bytes.
func canonical(v any) ([]byte, error) { return Format{}.text(v) }

// Encode writes v as encoding/json does, without HTML escaping and
// without a final newline: as aws-lambda-go encodes a response, and as a
// key's canonical text reads. It is the module's one such encoder.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// asDecoded returns v as encoding/json decodes it: v itself when it is
// made of what encoding/json decodes, else v read back from its canonical
// JSON (a struct becomes an object, its fields in key order), refusing
// text that it could not encode faithfully.
func asDecoded(v any) (any, error) {
	if decoded(v) {
		return v, nil
	}
	b, err := Encode(v)
	if err != nil {
		return nil, err
	}
	if ReplacedText(b) {
		return nil, &InvalidTextError{Path: "@"}
	}
	return decodeJSON(b)
}

// ReplacedText reports whether b, as json.Marshal wrote it, holds a
// \ufffd escape. encoding/json writes one for each byte of invalid UTF-8
// in a Go string, and writes a real U+FFFD as its UTF-8 bytes: the escape
// marks text it could not encode, which would make values that differ one
// text. (A json.RawMessage or a MarshalJSON method that writes the escape
// itself is refused too.)
func ReplacedText(b []byte) bool {
	const escape = `\ufffd`
	for i := 0; ; i++ {
		j := bytes.Index(b[i:], []byte(escape))
		if j < 0 {
			return false
		}
		i += j
		// The backslash starts an escape unless an odd run of
		// backslashes, escapes of their own, stands before it.
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
	}
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

// decodeJSON decodes raw JSON keeping numbers as written.
func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// InexactError refuses, in a Powertools mode, a number that the runtime
// would read as another (see exactDouble): requests that differ in it
// would share a hash. Path is where it is in the selected value.
type InexactError struct {
	Mode   Mode
	Path   string
	Number string
}

func (e *InexactError) Error() string {
	return fmt.Sprintf("the number %s at %s is inexact in %d mode", e.Number, e.Path, e.Mode)
}

// NumberText is how the runtime of m writes back the number text after
// reading it as a double.
func NumberText(m Mode, number string) string {
	f, _ := strconv.ParseFloat(number, 64)
	if m == TypeScript {
		return string(appendTypeScriptNumber(nil, f))
	}
	return string(appendPythonFloat(nil, f))
}

package jmespath

import (
	"bytes"
	"encoding/json"
)

// maxJSONDepth is one less than encoding/json's nesting limit, so that this
// reader never accepts a document that encoding/json rejects. A document it
// refuses is handed to encoding/json, which has the final word.
const maxJSONDepth = 9999

// jsonReader validates and decodes JSON text the way encoding/json does with
// UseNumber: objects to map[string]any, arrays to []any, numbers to
// json.Number, strings unescaped with invalid UTF-8 and lone surrogates
// replaced by U+FFFD, the last of duplicate keys winning. It reports
// failure with ok=false and no detail: callers then ask encoding/json for
// the authoritative error.
type jsonReader struct {
	b     []byte
	i     int
	depth int
}

// parseJSON decodes one JSON document, allowing surrounding whitespace.
func parseJSON(b []byte) (any, bool) {
	r := jsonReader{b: b}
	r.space()
	v, ok := r.value()
	if !ok {
		return nil, false
	}
	r.space()
	return v, r.i == len(b)
}

// decodeJSON decodes raw like json.Unmarshal with UseNumber, returning
// encoding/json's error for invalid input.
func decodeJSON(raw []byte) (any, error) {
	if v, ok := parseJSON(raw); ok {
		return v, nil
	}
	return decodeStd(raw)
}

// decodeStd is the reference decoder, used for its error messages and as
// the last word on what is valid.
func decodeStd(raw []byte) (any, error) {
	var v any
	if !json.Valid(raw) {
		return nil, json.Unmarshal(raw, &v)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func (r *jsonReader) space() { r.i = space(r.b, r.i) }

func (r *jsonReader) value() (any, bool) {
	if r.i >= len(r.b) {
		return nil, false
	}
	switch c := r.b[r.i]; {
	case c == '"':
		return r.str()
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '-' || isDigit(c):
		start := r.i
		if !r.number() {
			return nil, false
		}
		return json.Number(r.b[start:r.i]), true
	default:
		return r.word()
	}
}

func (r *jsonReader) word() (any, bool) {
	rest := r.b[r.i:]
	switch {
	case bytes.HasPrefix(rest, []byte("true")):
		r.i += 4
		return true, true
	case bytes.HasPrefix(rest, []byte("false")):
		r.i += 5
		return false, true
	case bytes.HasPrefix(rest, []byte("null")):
		r.i += 4
		return nil, true
	}
	return nil, false
}

func (r *jsonReader) str() (any, bool) {
	s, ok := r.stringValue()
	return s, ok
}

// stringValue decodes the string at r.i.
func (r *jsonReader) stringValue() (string, bool) {
	start := r.i
	plain, ok := r.skipString()
	if !ok {
		return "", false
	}
	if plain {
		return string(r.b[start+1 : r.i-1]), true
	}
	return string(unescape(r.b[start+1 : r.i-1])), true
}

// skipString moves past the string at r.i. plain reports that its bytes
// between the quotes are its value (no escape, valid UTF-8).
func (r *jsonReader) skipString() (plain, ok bool) {
	end, plain := scanString(r.b, r.i+1)
	if end < 0 {
		return false, false
	}
	r.i = end
	return plain, true
}

// number moves past the number at r.i.
func (r *jsonReader) number() bool {
	end := numberEnd(r.b, r.i)
	if end < 0 {
		return false
	}
	r.i = end
	return true
}

func (r *jsonReader) object() (any, bool) {
	if r.depth++; r.depth > maxJSONDepth {
		return nil, false
	}
	m := map[string]any{}
	ok := r.walk(true, func(keyStart, keyEnd int, plain bool) bool {
		var key string
		if plain {
			key = string(r.b[keyStart+1 : keyEnd-1])
		} else {
			key = string(unescape(r.b[keyStart+1 : keyEnd-1]))
		}
		v, ok := r.value()
		m[key] = v
		return ok
	})
	r.depth--
	return m, ok
}

func (r *jsonReader) array() (any, bool) {
	if r.depth++; r.depth > maxJSONDepth {
		return nil, false
	}
	a := []any{}
	ok := r.walk(false, func(int, int, bool) bool {
		v, ok := r.value()
		a = append(a, v)
		return ok
	})
	r.depth--
	return a, ok
}

// walk moves through the object or array at r.i, calling each with r.i at
// a member's value; in an object, also with the bounds of its quoted key
// and whether the key needs no unescaping. each must move past the value.
func (r *jsonReader) walk(object bool, each func(keyStart, keyEnd int, plainKey bool) bool) bool {
	closer := byte(']')
	if object {
		closer = '}'
	}
	r.i++
	r.space()
	if r.i < len(r.b) && r.b[r.i] == closer {
		r.i++
		return true
	}
	for {
		keyStart, keyEnd, plain := r.i, 0, false
		if object {
			if r.i >= len(r.b) || r.b[r.i] != '"' {
				return false
			}
			var ok bool
			if plain, ok = r.skipString(); !ok {
				return false
			}
			keyEnd = r.i
			r.space()
			if r.i >= len(r.b) || r.b[r.i] != ':' {
				return false
			}
			r.i++
			r.space()
		}
		if !each(keyStart, keyEnd, plain) {
			return false
		}
		r.space()
		if r.i >= len(r.b) {
			return false
		}
		switch r.b[r.i] {
		case ',':
			r.i++
			r.space()
		case closer:
			r.i++
			return true
		default:
			return false
		}
	}
}

// skip moves past one value, validating it, without building anything.
func (r *jsonReader) skip() bool {
	end := skipValue(r.b, r.i, r.depth)
	if end < 0 {
		return false
	}
	r.i = end
	return true
}

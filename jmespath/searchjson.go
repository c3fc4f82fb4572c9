package jmespath

import (
	"encoding/binary"
	"unicode/utf8"
)

// SearchJSON evaluates the expression against the JSON document raw, with
// numbers as json.Number. The result is the one Search gives on the
// document decoded by encoding/json with UseNumber.
//
// An expression that is a chain of field names, non-negative indexes and
// powertools_json calls, such as `requestContext.requestId` or
// `powertools_json(body).order_id`, is answered in one pass over raw that
// validates the whole document but decodes only the selected value. Any
// other expression, and any case the pass does not settle, decodes the
// whole document and calls Search.
//
// A document that is not valid JSON fails with an [*InvalidValueError]
// wrapping encoding/json's error.
func (e *Expression) SearchJSON(raw []byte) (result any, err error) {
	defer guard(&err)
	if e.path != nil {
		if v, ok := scanDoc(raw, e.path); ok {
			return v, nil
		}
	}
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, &InvalidValueError{Msg: "invalid JSON document", Err: err}
	}
	return e.tree.eval(e.tree.root(), doc)
}

type stepKind uint8

const (
	stepField stepKind = iota
	stepIndex
	stepJSON // powertools_json of the current value
)

type pathStep struct {
	kind  stepKind
	name  string
	index int
	// ascii is set when name is all ASCII: a key without escapes then
	// matches it only as the same bytes, which findField can tell without
	// checking the key's UTF-8.
	ascii bool
}

// planPath returns the steps of an expression that SearchJSON can answer by
// scanning, or nil.
func planPath(t *tree) []pathStep {
	size := pathLen(t, t.root())
	if size <= 0 {
		return nil
	}
	steps, _ := appendPath(t, make([]pathStep, 0, size), t.root())
	return steps
}

// pathLen counts the steps appendPath would produce, or returns -1 if the
// expression is not a path.
func pathLen(t *tree, n *node) int {
	switch n.kind {
	case nCurrent:
		return 0
	case nField:
		return 1
	case nSubexpr:
		total := 0
		for i := n.left; i != 0; i = t.nodes[i].next {
			k := pathLen(t, &t.nodes[i])
			if k < 0 {
				return -1
			}
			total += k
		}
		return total
	case nIndex:
		if n.index() >= 0 {
			return 1
		}
	case nFunction:
		if t.fn(n) != powertoolsJSON || n.count() != 1 {
			return -1
		}
		if k := pathLen(t, t.at(n.left)); k >= 0 {
			return k + 1
		}
	}
	return -1
}

func appendPath(t *tree, steps []pathStep, n *node) ([]pathStep, bool) {
	ok := true
	switch n.kind {
	case nCurrent:
	case nField:
		name := t.name(n)
		steps = append(steps, pathStep{kind: stepField, name: name, ascii: isASCII(name)})
	case nSubexpr:
		for i := n.left; i != 0; i = t.nodes[i].next {
			if steps, ok = appendPath(t, steps, &t.nodes[i]); !ok {
				break
			}
		}
	case nIndex:
		if n.index() < 0 {
			return nil, false
		}
		steps = append(steps, pathStep{kind: stepIndex, index: n.index()})
	case nFunction:
		if t.fn(n) != powertoolsJSON || n.count() != 1 {
			return nil, false
		}
		if steps, ok = appendPath(t, steps, t.at(n.left)); ok {
			steps = append(steps, pathStep{kind: stepJSON})
		}
	default:
		ok = false
	}
	return steps, ok
}

// scanDoc answers steps on the JSON document b. ok is false when b is not
// valid JSON or when the answer needs the general path (an error, such as
// powertools_json of a non-string).
func scanDoc(b []byte, steps []pathStep) (any, bool) {
	r := jsonReader{b: b}
	r.space()
	v, ok := r.find(steps)
	if !ok {
		return nil, false
	}
	r.space()
	return v, r.i == len(b)
}

// find applies steps to the value at r.i and moves past it, validating all
// of it.
func (r *jsonReader) find(steps []pathStep) (any, bool) {
	if len(steps) == 0 {
		return r.value()
	}
	if r.i >= len(r.b) {
		return nil, false
	}
	c := r.b[r.i]
	switch st := steps[0]; {
	case st.kind == stepJSON:
		if c != '"' {
			return nil, false
		}
		v, end, ok := findInString(r.b, r.i+1, steps[1:])
		r.i = end
		return v, ok
	case st.kind == stepField && c == '{', st.kind == stepIndex && c == '[':
		if r.depth++; r.depth > maxJSONDepth {
			return nil, false
		}
		v, ok := r.findMember(st, steps[1:])
		r.depth--
		return v, ok
	}
	if !r.skip() {
		return nil, false
	}
	return noMatch(steps[1:])
}

// findMember walks the object or array at r.i for the member st selects. In
// an object the last of duplicate keys wins, as in encoding/json.
func (r *jsonReader) findMember(st pathStep, rest []pathStep) (any, bool) {
	if st.kind == stepField {
		return r.findField(st, rest)
	}
	return r.findElement(st.index, rest)
}

// findField is findMember for the field st.name of the object at r.i. Keys
// are compared as they are in the text unless they need decoding.
func (r *jsonReader) findField(st pathStep, rest []pathStep) (any, bool) {
	b := r.b
	var result any
	found := false
	i := space(b, r.i+1)
	if i < len(b) && b[i] == '}' {
		r.i = i + 1
		return noMatch(rest)
	}
	for {
		var match bool
		if i, match = nextField(b, i, r.depth, st.name, st.ascii); i < 0 {
			return nil, false
		}
		r.i = i
		if !match {
			if !found {
				return noMatch(rest)
			}
			return result, true
		}
		v, ok := r.find(rest)
		if !ok {
			return nil, false
		}
		result, found = v, true
		if i = space(b, r.i); i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			if j := nextIndented(b, i); j > 0 {
				i = j
				continue
			}
			i = space(b, i+1)
		case '}':
			r.i = i + 1
			return result, true
		default:
			return nil, false
		}
	}
}

// nextField walks the members of an object at depth from the key at b[i],
// skipping those whose key is not name, and returns the index of the value
// of the first whose key is (match), or the index past the object's '}'
// (no match), or -1 when the text is invalid. It is findField's loop over
// members, apart so that its few values stay in registers across the
// calls that skip values: in findField's body, with the result and the
// rest of the path live, they were spilled and reloaded around each call.
// The members are skipped as in skipObject.
//
// ascii is set when name is all ASCII: a key without escapes then matches
// it only as the same bytes, with no UTF-8 check.
func nextField(b []byte, i, depth int, name string, ascii bool) (next int, match bool) {
	for {
		if uint(i) >= uint(len(b)) || b[i] != '"' {
			return -1, false
		}
		keyEnd := -1
		if ascii {
			// Most keys have no escape. Decoding such a key keeps its
			// ASCII bytes and turns the others into non-ASCII
			// characters: it decodes to an ASCII name exactly when its
			// bytes are the name.
			if k := nextStop(b, i+1); uint(k) < uint(len(b)) && b[k] == '"' {
				keyEnd, match = k+1, k-i-1 == len(name) && string(b[i+1:k]) == name
			}
		}
		if keyEnd < 0 {
			if keyEnd, match = keyMatch(b, i, name); keyEnd < 0 {
				return -1, false
			}
		}
		// ": " in one step, as in skipObject; ",\n" and indentation
		// below, with skipObject's nextIndented.
		if i = keyEnd; i <= len(b)-3 && binary.LittleEndian.Uint16(b[i:i+2]) == ':'|' '<<8 && b[i+2] > ' ' {
			i += 2
		} else {
			i = space(b, i)
			if i >= len(b) || b[i] != ':' {
				return -1, false
			}
			i = space(b, i+1)
		}
		if match {
			return i, true
		}
		if uint(i) < uint(len(b)) && b[i] == '"' {
			if k := nextStop(b, i+1); uint(k) < uint(len(b)) && b[k] == '"' {
				i = k + 1
			} else {
				i = stringEnd(b, k)
			}
		} else {
			i = skipValue(b, i, depth)
		}
		if i < 0 {
			return -1, false
		}
		if j := nextIndented(b, i); j > 0 {
			i = j
			continue
		}
		if i = space(b, i); i >= len(b) {
			return -1, false
		}
		switch b[i] {
		case ',':
			i = space(b, i+1)
		case '}':
			return i + 1, false
		default:
			return -1, false
		}
	}
}

// findElement is findMember for element index of the array at r.i.
func (r *jsonReader) findElement(index int, rest []pathStep) (any, bool) {
	b := r.b
	var result any
	found := false
	i := space(b, r.i+1)
	if i < len(b) && b[i] == ']' {
		r.i = i + 1
		return noMatch(rest)
	}
	for elem := 0; ; elem++ {
		if elem == index {
			r.i = i
			v, ok := r.find(rest)
			if !ok {
				return nil, false
			}
			result, found = v, true
			i = space(b, r.i)
		} else if i = skipMember(b, i, r.depth); i < 0 {
			return nil, false
		}
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = space(b, i+1)
		case ']':
			r.i = i + 1
			if !found {
				return noMatch(rest)
			}
			return result, true
		default:
			return nil, false
		}
	}
}

// keyMatch returns the index past the key at b[i], a quote, or -1 when it
// is invalid, and whether it decodes to name.
func keyMatch(b []byte, i int, name string) (end int, match bool) {
	end, plain := scanString(b, i+1)
	// A plain key of another length is another name.
	if end < 0 || plain && end-i-2 != len(name) {
		return end, false
	}
	if plain {
		return end, string(b[i+1:end-1]) == name
	}
	return end, string(unescape(b[i+1:end-1])) == name
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// findInString applies steps to the JSON document held in the string
// whose contents start at b[i], a powertools_json step, and returns the
// index past the string. Nothing else validates that document, so it is
// always scanned in full, whichever search asked. Most such documents are
// scanned in the string (scanquoted.go); any other is decoded into a buffer
// on the stack when it fits: the document in it is only read, and what is
// selected from it is copied out.
func findInString(b []byte, i int, steps []pathStep) (v any, end int, ok bool) {
	if v, end, ok := findQuoted(b, i, steps); ok {
		return v, end, true
	}
	var buf [512]byte
	text, end := appendString(buf[:0], b, i)
	if end < 0 {
		return nil, -1, false
	}
	v, ok = scanDoc(text, steps)
	return v, end, ok
}

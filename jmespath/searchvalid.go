package jmespath

import "encoding/json"

// SearchValidJSON is [Expression.SearchJSON] for a document that is valid
// JSON, or that the caller validates before trusting the result, the way
// json.Unmarshal validates all of its input before decoding any of it.
//
// On a path expression (see SearchJSON) it validates only the value it
// selects, and any document a powertools_json step parses; it crosses the
// rest without checking it, starting from the end of each object, so it
// stops at the last of duplicate keys, the one that counts. A key near the
// end of a large event, such as an API Gateway body, is found without
// reading most of the event.
//
// On a document that is not valid JSON the result is unspecified: a value,
// null or an error, never a panic. [ValidJSON] tells such a document apart.
func (e *Expression) SearchValidJSON(raw []byte) (result any, err error) {
	if e.path != nil {
		if v, ok := findValid(raw, e.path); ok {
			return v, nil
		}
	}
	return e.SearchJSON(raw)
}

// ValidJSON reports whether raw is one JSON document, surrounding
// whitespace allowed, as json.Valid does, with SearchJSON's scanner.
func ValidJSON(raw []byte) bool {
	if i := skipValue(raw, space(raw, 0), 0); i >= 0 && space(raw, i) == len(raw) {
		return true
	}
	// The scanner also refuses documents nested deeper than maxJSONDepth;
	// encoding/json has the last word on those.
	return json.Valid(raw)
}

// findValid answers steps on the document b by the lax scanner. ok is false
// when it cannot (b is not valid JSON, or an error needs the general path).
func findValid(b []byte, steps []pathStep) (any, bool) {
	start, end := space(b, 0), spaceBack(b, 0, len(b))
	if start >= end {
		return nil, false
	}
	return findIn(b[:end], start, steps)
}

// findIn applies steps to the value b[i:], which ends where b ends.
func findIn(b []byte, i int, steps []pathStep) (any, bool) {
	if i < 0 || i >= len(b) {
		return nil, false
	}
	if len(steps) == 0 {
		r := jsonReader{b: b, i: i}
		v, ok := r.value()
		return v, ok && r.i == len(b)
	}
	c := b[i]
	switch st := steps[0]; {
	case st.kind == stepJSON:
		if c != '"' {
			return nil, false
		}
		v, end, ok := findInString(b, i+1, steps[1:])
		return v, ok && end == len(b)
	case st.kind == stepField && c == '{':
		if b[len(b)-1] != '}' {
			return nil, false
		}
		return findFieldBack(b, i, st, steps[1:])
	case st.kind == stepIndex && c == '[':
		if b[len(b)-1] != ']' {
			return nil, false
		}
		return findElementLax(b, i, st.index, steps[1:])
	}
	return noMatch(steps[1:])
}

// noMatch is the answer when a step finds nothing: null, unless a later
// powertools_json would fail on that null.
func noMatch(rest []pathStep) (any, bool) {
	for _, st := range rest {
		if st.kind == stepJSON {
			return nil, false
		}
	}
	return nil, true
}

// findFieldBack is findIn for the field st.name of the object b[open:],
// which ends with its '}' where b ends. It walks the members from the last.
func findFieldBack(b []byte, open int, st pathStep, rest []pathStep) (any, bool) {
	end := spaceBack(b, open+1, len(b)-1) // past the last member's value
	if end == open+1 {
		return noMatch(rest)
	}
	for {
		vs := valueStart(b, open+1, end)
		if vs < 0 {
			return nil, false
		}
		q := spaceBack(b, open+1, vs) - 1 // the ':'
		if q <= open || b[q] != ':' {
			return nil, false
		}
		q = spaceBack(b, open+1, q) - 1 // the key's closing quote
		if q <= open || b[q] != '"' {
			return nil, false
		}
		ks, escaped := openQuote(b, open+1, q)
		if ks < 0 {
			return nil, false
		}
		if keyIs(b, ks, q, escaped, st) {
			return findIn(b[:end], vs, rest)
		}
		sep := spaceBack(b, open+1, ks) - 1
		switch {
		case sep == open:
			return noMatch(rest)
		case sep < open || b[sep] != ',':
			return nil, false
		}
		end = spaceBack(b, open+1, sep)
	}
}

// keyIs reports whether the key b[ks:q+1], with escapes or not, decodes to
// st.name. For an ASCII name two cases need no decoding: a key without
// escapes matches only as the same bytes (its other bytes decode to
// non-ASCII text), and a key with escapes only if it has more bytes than
// the name, since each escape decodes to fewer bytes than it takes.
func keyIs(b []byte, ks, q int, escaped bool, st pathStep) bool {
	n := q - ks - 1
	if st.ascii && !escaped {
		return n == len(st.name) && string(b[ks+1:q]) == st.name
	}
	if st.ascii && n <= len(st.name) {
		return false
	}
	_, match := keyMatch(b, ks, st.name)
	return match
}

// findElementLax is findIn for element index of the array b[open:].
func findElementLax(b []byte, open, index int, rest []pathStep) (any, bool) {
	i := space(b, open+1)
	if i < len(b) && b[i] == ']' {
		return noMatch(rest)
	}
	for elem := 0; ; elem++ {
		end := valueEnd(b, i)
		if end < 0 {
			return nil, false
		}
		if elem == index {
			return findIn(b[:end], i, rest)
		}
		if i = space(b, end); i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = space(b, i+1)
		case ']':
			return noMatch(rest)
		default:
			return nil, false
		}
	}
}

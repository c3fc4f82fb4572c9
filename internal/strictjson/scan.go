package strictjson

import (
	"encoding/json"
	"fmt"
)

// maxDepth bounds nesting one below encoding/json's limit, so that no text
// it refuses for depth is accepted here.
const maxDepth = 9999

// scanner reads one JSON text, b, from b[i]. Every method validates what it
// crosses and stops at the first problem with an error.
type scanner struct {
	b      []byte
	i      int
	depth  int
	quoted bool // b is a document held in a string
}

// document reads the whole text: optional whitespace, the value, at which
// path is followed (nil decodes all of it), optional whitespace.
func (s *scanner) document(path []Step) (any, error) {
	s.space()
	v, err := s.find(path)
	if err != nil {
		return nil, err
	}
	s.space()
	if s.i < len(s.b) {
		return nil, s.syntax("data after the JSON value")
	}
	return v, nil
}

// find follows path from the value at s.i and moves past that value.
func (s *scanner) find(path []Step) (any, error) {
	if len(path) == 0 {
		return s.value()
	}
	if s.i >= len(s.b) {
		return nil, s.syntax("unexpected end of JSON input")
	}
	c := s.b[s.i]
	switch st := path[0]; {
	case st.Kind == Document && c == '"':
		return s.findInString(path[1:])
	case st.Kind == Document:
		if err := s.skip(); err != nil {
			return nil, err
		}
		return nil, &TypeError{Got: typeName(c)}
	case st.Kind == Member && c == '{':
		return s.findMember(st.Name, path[1:])
	case st.Kind == Index && c == '[':
		return s.findElement(st.Index, path[1:])
	}
	if err := s.skip(); err != nil {
		return nil, err
	}
	return nothing(path[1:])
}

// nothing is what the rest of a path gives once a step has selected
// nothing: nothing, unless a Document step needs a string there.
func nothing(rest []Step) (any, error) {
	for _, st := range rest {
		if st.Kind == Document {
			return nil, &TypeError{Got: "null"}
		}
	}
	return nil, nil
}

// findInString follows path in the document held in the string at s.i.
func (s *scanner) findInString(path []Step) (any, error) {
	start := s.i
	simple, err := s.skipString()
	if err != nil {
		return nil, err
	}
	text := s.b[start+1 : s.i-1]
	if !simple {
		text = appendUnquoted(make([]byte, 0, len(text)), text)
	}
	inner := scanner{b: text, quoted: true}
	return inner.document(path)
}

// findMember follows rest from the member name of the object at s.i. A
// member whose name folds to name, other than one exact match, is refused.
func (s *scanner) findMember(name string, rest []Step) (any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	var result any
	found := false
	variant, variantAt := "", 0
	var buf [64]byte
	for more := s.open('}'); more; {
		at := s.i
		key, err := s.name(buf[:0])
		if err != nil {
			return nil, err
		}
		if err := s.colon(); err != nil {
			return nil, err
		}
		switch {
		case string(key) == name:
			if found {
				return nil, s.duplicate(at, name, name)
			}
			found = true
			if result, err = s.find(rest); err != nil {
				return nil, err
			}
		case sameFold(key, name):
			if variant == "" {
				variant, variantAt = string(key), at
			}
			fallthrough
		default:
			if err := s.skip(); err != nil {
				return nil, err
			}
		}
		if more, err = s.next('}'); err != nil {
			return nil, err
		}
	}
	s.depth--
	switch {
	case variant != "" && found:
		return nil, s.duplicate(variantAt, variant, name)
	case variant != "":
		return nil, &DuplicateNameError{Offset: variantAt, Quoted: s.quoted, Name: name, Variant: variant}
	case !found:
		return nothing(rest)
	}
	return result, nil
}

// findElement follows rest from element index of the array at s.i.
func (s *scanner) findElement(index int, rest []Step) (any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	var result any
	found := false
	for n, more := 0, s.open(']'); more; n++ {
		var err error
		if n == index {
			found = true
			result, err = s.find(rest)
		} else {
			err = s.skip()
		}
		if err != nil {
			return nil, err
		}
		if more, err = s.next(']'); err != nil {
			return nil, err
		}
	}
	s.depth--
	if !found {
		return nothing(rest)
	}
	return result, nil
}

// value decodes the value at s.i, refusing an object with two names that
// fold to one another.
func (s *scanner) value() (any, error) {
	if s.i >= len(s.b) {
		return nil, s.syntax("unexpected end of JSON input")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		start := s.i
		simple, err := s.skipString()
		if err != nil {
			return nil, err
		}
		if simple {
			return string(s.b[start+1 : s.i-1]), nil
		}
		return string(appendUnquoted(nil, s.b[start+1:s.i-1])), nil
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		if err := s.number(); err != nil {
			return nil, err
		}
		return json.Number(s.b[start:s.i]), nil
	}
	return s.literal()
}

func (s *scanner) object() (any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	m := make(map[string]any)
	var folded map[string]string // folded name -> name, from the second member on
	var buf [64]byte
	for more := s.open('}'); more; {
		at := s.i
		key, err := s.name(buf[:0])
		if err != nil {
			return nil, err
		}
		name := string(key)
		if len(m) > 0 {
			if folded == nil {
				folded = make(map[string]string, 8)
				for k := range m {
					folded[foldName(k)] = k
				}
			}
			f := foldName(name)
			if other, ok := folded[f]; ok {
				return nil, s.duplicate(at, name, other)
			}
			folded[f] = name
		}
		if err := s.colon(); err != nil {
			return nil, err
		}
		if m[name], err = s.value(); err != nil {
			return nil, err
		}
		if more, err = s.next('}'); err != nil {
			return nil, err
		}
	}
	s.depth--
	return m, nil
}

func (s *scanner) array() (any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	a := []any{}
	for more := s.open(']'); more; {
		v, err := s.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if more, err = s.next(']'); err != nil {
			return nil, err
		}
	}
	s.depth--
	return a, nil
}

// skip validates the value at s.i and moves past it.
func (s *scanner) skip() error {
	if s.i >= len(s.b) {
		return s.syntax("unexpected end of JSON input")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, err := s.skipString()
		return err
	case c == '{':
		if err := s.enter(); err != nil {
			return err
		}
		for more := s.open('}'); more; {
			if _, err := s.skipString(); err != nil {
				return err
			}
			if err := s.colon(); err != nil {
				return err
			}
			if err := s.skip(); err != nil {
				return err
			}
			var err error
			if more, err = s.next('}'); err != nil {
				return err
			}
		}
		s.depth--
		return nil
	case c == '[':
		if err := s.enter(); err != nil {
			return err
		}
		for more := s.open(']'); more; {
			if err := s.skip(); err != nil {
				return err
			}
			var err error
			if more, err = s.next(']'); err != nil {
				return err
			}
		}
		s.depth--
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	_, err := s.literal()
	return err
}

// enter goes one level deeper, into the object or array at s.i.
func (s *scanner) enter() error {
	if s.depth++; s.depth > maxDepth {
		return s.syntax("exceeded max depth")
	}
	return nil
}

// open moves past the '{' or '[' at s.i and the whitespace after it, and
// reports whether a member follows rather than the closing byte, which it
// then moves past. An object's member must start with a name.
func (s *scanner) open(closing byte) bool {
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == closing {
		s.i++
		return false
	}
	return true
}

// next moves past the whitespace after a member and the ',' or closing
// byte that must follow, and reports whether another member follows.
func (s *scanner) next(closing byte) (bool, error) {
	s.space()
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
			return true, nil
		case closing:
			s.i++
			return false, nil
		}
	}
	return false, s.syntax(fmt.Sprintf("expected ',' or '%c'", closing))
}

// colon moves past the ':' after a member name and the whitespace around.
func (s *scanner) colon() error {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return s.syntax("expected ':' after a member name")
	}
	s.i++
	s.space()
	return nil
}

// name reads the member name at s.i and returns it decoded: a slice of the
// text when it needs no decoding, else appended to buf.
func (s *scanner) name(buf []byte) ([]byte, error) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, s.syntax("expected a member name")
	}
	start := s.i
	simple, err := s.skipString()
	if err != nil {
		return nil, err
	}
	if simple {
		return s.b[start+1 : s.i-1], nil
	}
	return appendUnquoted(buf, s.b[start+1:s.i-1]), nil
}

func (s *scanner) literal() (any, error) {
	for _, lit := range [...]struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(s.b)-s.i >= len(lit.text) && string(s.b[s.i:s.i+len(lit.text)]) == lit.text {
			s.i += len(lit.text)
			return lit.v, nil
		}
	}
	return nil, s.syntax("invalid character looking for the beginning of a value")
}

// number moves past the number at s.i, by JSON's grammar.
func (s *scanner) number() error {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return s.syntaxAt(i, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return s.syntaxAt(i+1, "invalid number: no digit after the decimal point")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			return s.syntaxAt(i, "invalid number: no digit in the exponent")
		}
	}
	s.i = i
	return nil
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) syntax(msg string) error { return s.syntaxAt(s.i, msg) }

func (s *scanner) syntaxAt(i int, msg string) error {
	return &SyntaxError{Offset: i, Quoted: s.quoted, Msg: msg}
}

func (s *scanner) duplicate(at int, name, other string) error {
	return &DuplicateNameError{Offset: at, Quoted: s.quoted, Name: name, Other: other}
}

// typeName is the JSON type of the value that starts with c, in valid text.
func typeName(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

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
	ascii  bool // b is all ASCII (see checkText)
	// syntaxOnly has skip check the grammar alone: for orSyntax, which
	// looks for text that is not JSON after a refusal.
	syntaxOnly bool
	budget     *Budget // what the values built from b spend
}

// newScanner returns a scanner of doc spending from b, after checkText.
func newScanner(doc []byte, quoted bool, b *Budget) (scanner, error) {
	ascii, err := checkText(doc, quoted)
	return scanner{b: doc, quoted: quoted, ascii: ascii, budget: b}, err
}

// document decodes the whole text: optional whitespace, the value,
// optional whitespace.
func (s *scanner) document() (any, error) {
	s.space()
	v, err := s.value()
	if err != nil {
		return nil, s.orSyntax(err)
	}
	return v, s.end()
}

// orSyntax returns err, met while reading s.b, unless it is a refusal of
// JSON text (of names, of text, of a document's length) and the text is
// not JSON further on: then the syntax error, since text that is not JSON
// is reported as such whatever came before the fault.
func (s *scanner) orSyntax(err error) error {
	if _, ok := err.(*SyntaxError); ok {
		return err
	}
	v := scanner{b: s.b, quoted: s.quoted, ascii: s.ascii, syntaxOnly: true}
	v.space()
	if verr := v.skip(); verr != nil {
		return verr
	}
	if verr := v.end(); verr != nil {
		return verr
	}
	return err
}

// end checks that only whitespace is left.
func (s *scanner) end() error {
	s.space()
	if s.i < len(s.b) {
		return s.syntax("data after the JSON value")
	}
	return nil
}

// value decodes the value at s.i, refusing an object with two names that
// fold to one another and a string holding a lone surrogate, and spends
// what each part of it costs before it is made.
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
		var buf [64]byte
		v, _, err := s.readString(buf[:0])
		if err != nil {
			return nil, err
		}
		if err := s.spend(StringCost(len(v))); err != nil {
			return nil, err
		}
		return string(v), nil
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		if err := s.number(); err != nil {
			return nil, err
		}
		if err := s.spend(StringCost(s.i - start)); err != nil {
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
	if err := s.spend(mapCost); err != nil {
		return nil, err
	}
	m := make(map[string]any)
	var ns names
	var buf [64]byte
	for more := s.open('}'); more; {
		at := s.i
		key, plain, err := s.name(buf[:0])
		if err != nil {
			return nil, err
		}
		if err := s.addKey(&ns, at, key, plain); err != nil {
			return nil, err
		}
		if err := s.spend(memberCost(len(m)+1) + len(key)); err != nil {
			return nil, err
		}
		name := string(key)
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
	if err := s.spend(sliceCost); err != nil {
		return nil, err
	}
	a := []any{}
	for more := s.open(']'); more; {
		v, err := s.value()
		if err != nil {
			return nil, err
		}
		if a, err = s.appendValue(a, v); err != nil {
			return nil, err
		}
		if more, err = s.next(']'); err != nil {
			return nil, err
		}
	}
	s.depth--
	return a, nil
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

// name reads the member name at s.i and moves past the ':' after it and
// the whitespace around. It returns the name decoded: a slice of the text
// when it needs no decoding (ASCII without escapes: plain), else appended
// to buf.
func (s *scanner) name(buf []byte) (name []byte, plain bool, err error) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, s.syntax("expected a member name")
	}
	if name, plain, err = s.readString(buf); err != nil {
		return nil, false, err
	}
	if s.space(); s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, false, s.syntax("expected ':' after a member name")
	}
	s.i++
	s.space()
	return name, plain, nil
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
		if i = digits(b, i+1); b[i-1] == '.' {
			return s.syntaxAt(i, "invalid number: no digit after the decimal point")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return s.syntaxAt(j, "invalid number: no digit in the exponent")
		}
		i = j
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

func (s *scanner) syntax(msg string) error { return s.syntaxAt(s.i, msg) }

func (s *scanner) syntaxAt(i int, msg string) error {
	return &SyntaxError{Offset: i, Quoted: s.quoted, Msg: msg}
}

func (s *scanner) duplicate(at int, name, other string) error {
	return &DuplicateNameError{Offset: at, Quoted: s.quoted, Name: name, Other: other}
}

// typeName is the JSON type of the value that starts with c, in valid
// text.
func typeName(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads JSON the ways the package's contract names, with
// encoding/json only: as a map (decodeStd, mapView), as a struct
// (structView) and as a stream of tokens (hasFoldPair, hasBadText,
// pathFacts), which keeps every member name, repeated or not, and the
// raw text of every string.

// decodeStd decodes text as the reference does: encoding/json with
// UseNumber, refusing data after the value.
func decodeStd(text []byte) (any, error) {
	d := newDecoder(text)
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = errors.New("data after the JSON value")

func newDecoder(text []byte) *json.Decoder {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	return d
}

// mapView follows path in v, a decodeStd result, as a JMESPath
// evaluation over it does. A Document or Transform step on a non-string
// gives a *TypeError; a Document step on a string that does not hold
// JSON, that decoding error. An Each step is a projection.
func mapView(v any, path []Step) (any, error) {
	for i, st := range path {
		switch st.Kind {
		case Member:
			m, _ := v.(map[string]any)
			v = m[st.Name]
		case Index:
			a, _ := v.([]any)
			v = nil
			if st.Index < len(a) {
				v = a[st.Index]
			}
		case Each:
			a, ok := v.([]any)
			if !ok {
				return nil, nil
			}
			out := []any{}
			for _, e := range a {
				r, err := mapView(e, path[i+1:])
				if err != nil {
					return nil, err
				}
				if r != nil {
					out = append(out, r)
				}
			}
			return out, nil
		case Document, Transform:
			s, ok := v.(string)
			if !ok {
				return nil, &TypeError{Name: st.Name, Got: jsonType(v)}
			}
			if st.Kind == Transform {
				out, _, err := st.Transform([]byte(s), Budget{})
				if err != nil {
					return nil, err
				}
				v = string(out)
				continue
			}
			var err error
			if v, err = decodeStd([]byte(s)); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// jsonType is the JSON type of a decodeStd result, or of a json.Token.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case json.Delim:
		if v == '[' {
			return "array"
		}
	}
	return "object"
}

// structView reads path in text as a handler does that decodes it into
// Go structs with encoding/json: each run of Member and Index steps as
// one chain of struct types, each with a single field tagged with the
// step's name, and slices, ending in a json.RawMessage; a Document step
// as a string decoded in turn. It returns that RawMessage: nil when the
// field was never set. ok is false when a name cannot be a struct tag
// name, or the path has an Each or a Transform step; err is not nil when
// a Document step gets no string.
func structView(text []byte, path []Step) (raw json.RawMessage, ok bool, err error) {
	for _, st := range path {
		if st.Kind == Each || st.Kind == Transform {
			return nil, false, nil // no struct field of one type reads them
		}
	}
	for {
		n := len(path)
		for i, st := range path {
			if st.Kind == Document {
				n = i
				break
			}
		}
		typ, ok := chainType(path[:n])
		if !ok {
			return nil, false, nil
		}
		v := reflect.New(typ)
		// A value of another type than a step expects leaves its field
		// unset, as for a JSON member that is absent.
		var typeErr *json.UnmarshalTypeError
		if err := json.Unmarshal(text, v.Interface()); err != nil && !errors.As(err, &typeErr) {
			return nil, false, err
		}
		raw = chainLeaf(v.Elem(), path[:n])
		if n == len(path) {
			return raw, true, nil
		}
		var s string
		if len(raw) == 0 || raw[0] != '"' {
			return nil, false, fmt.Errorf("a Document step gets %q", raw)
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		text, path = []byte(s), path[n+1:]
	}
}

var rawType = reflect.TypeFor[json.RawMessage]()

func chainType(steps []Step) (reflect.Type, bool) {
	typ := rawType
	for i := len(steps) - 1; i >= 0; i-- {
		switch st := steps[i]; st.Kind {
		case Member:
			if !isValidTag(st.Name) {
				return nil, false
			}
			// The comma keeps the name "-" a name.
			tag := `json:` + strconv.Quote(st.Name+",")
			typ = reflect.StructOf([]reflect.StructField{{Name: "V", Type: typ, Tag: reflect.StructTag(tag)}})
		case Index:
			typ = reflect.SliceOf(typ)
		}
	}
	return typ, true
}

func chainLeaf(v reflect.Value, steps []Step) json.RawMessage {
	for _, st := range steps {
		switch st.Kind {
		case Member:
			v = v.Field(0)
		case Index:
			if st.Index >= v.Len() {
				return nil
			}
			v = v.Index(st.Index)
		}
	}
	return v.Interface().(json.RawMessage)
}

// isValidTag is encoding/json's test of a struct tag name, its isValidTag:
// it ignores any other name and uses the field's.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// hasFoldPair reports whether valid JSON text has an object with two
// names that bytes.EqualFold holds equal.
func hasFoldPair(text []byte) bool {
	found, _ := foldPairs(newDecoder(text))
	return found
}

// foldPairs reads one value from d and reports whether it has an object
// with two names that bytes.EqualFold holds equal, up to the first error.
func foldPairs(d *json.Decoder) (bool, error) {
	tok, err := d.Token()
	if err != nil {
		return false, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return false, nil
	}
	return foldPairsIn(d, delim)
}

// foldPairsIn is foldPairs after the opening delim of an object or array.
func foldPairsIn(d *json.Decoder, delim json.Delim) (bool, error) {
	found := false
	var names []string
	for d.More() {
		if delim == '{' {
			name, err := nameToken(d)
			if err != nil {
				return found, err
			}
			for _, other := range names {
				found = found || bytes.EqualFold([]byte(name), []byte(other))
			}
			names = append(names, name)
		}
		f, err := foldPairs(d)
		if found = found || f; err != nil {
			return found, err
		}
	}
	_, err := d.Token()
	return found, err
}

func nameToken(d *json.Decoder) (string, error) {
	tok, err := d.Token()
	if err != nil {
		return "", err
	}
	name, ok := tok.(string)
	if !ok {
		return "", errors.New("a member name is not a string")
	}
	return name, nil
}

// hasBadText reports whether valid JSON text has a string, name or
// value, whose raw text holds a byte that is not UTF-8 or a \u escape of
// a lone surrogate: each string token's raw text is cut from text by the
// decoder's offsets.
func hasBadText(text []byte) bool {
	d := newDecoder(text)
	for {
		before := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if _, ok := tok.(string); !ok {
			continue
		}
		raw := text[before:d.InputOffset()]
		raw = raw[bytes.IndexByte(raw, '"')+1 : len(raw)-1]
		if !utf8.Valid(raw) || hasLoneSurrogate(raw) {
			return true
		}
	}
}

// hasLoneSurrogate reports whether the raw contents of a valid string
// have a \u escape in 0xD800-0xDFFF that is not a high one (0xD800-0xDBFF)
// directly followed by a low one (0xDC00-0xDFFF).
func hasLoneSurrogate(raw []byte) bool {
	escape := func(i int) (uint64, bool) { // the \u escape at raw[i], if any
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		r, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		return r, err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := escape(i)
		if !ok {
			i++ // a two-byte escape
			continue
		}
		i += 5
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if low, ok := escape(i + 1); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 6
				continue
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
	}
	return false
}

// pathFacts is what reading a text and following a path in it finds: the
// grounds on which Find may refuse the text.
type pathFacts struct {
	// Two names encoding/json reads as one, anywhere, or the path's name
	// only in a case variant: in the text, in a document that a Document
	// step decodes.
	pair, quotedPair bool
	// A string holding a byte that is not UTF-8 or a lone surrogate: in
	// the text, in a decoded document.
	badText, quotedBadText bool
	badDoc                 bool     // a Document step on a string that does not hold JSON
	typeGot                []string // the JSON type of each non-string at a Document or Transform step
	quoted                 bool     // reading a document held in a string
}

func (f *pathFacts) foundPair() {
	if f.quoted {
		f.quotedPair = true
	} else {
		f.pair = true
	}
}

func (f *pathFacts) foundBadText() {
	if f.quoted {
		f.quotedBadText = true
	} else {
		f.badText = true
	}
}

// read reads text, which must be valid JSON for its facts to be complete:
// its names and strings everywhere, then path in it.
func (f *pathFacts) read(text []byte, path []Step) error {
	if hasFoldPair(text) {
		f.foundPair()
	}
	if hasBadText(text) {
		f.foundBadText()
	}
	return f.follow(newDecoder(text), path)
}

// follow reads one value from d and follows path in it, as Find does: in
// an object on the path, a name that folds to the step's name without
// being it, with no exact match, is a pair; a Document step reads its
// document; an Each step follows the rest of the path in every element.
func (f *pathFacts) follow(d *json.Decoder, path []Step) error {
	if len(path) == 0 {
		_, err := foldPairs(d)
		return err
	}
	tok, err := d.Token()
	if err != nil {
		return err
	}
	st := path[0]
	switch {
	case st.Kind == Document || st.Kind == Transform:
		s, ok := tok.(string)
		if !ok {
			f.typeGot = append(f.typeGot, jsonType(tok))
			return skipRest(d, tok)
		}
		f.followString(s, path)
		return nil
	case st.Kind == Member && tok == json.Delim('{'):
		exact, variant := false, false
		for d.More() {
			name, err := nameToken(d)
			if err != nil {
				return err
			}
			switch {
			case name == st.Name && !exact:
				exact = true
				err = f.follow(d, path[1:])
			case bytes.EqualFold([]byte(name), []byte(st.Name)):
				variant = true
				fallthrough
			default:
				_, err = foldPairs(d)
			}
			if err != nil {
				return err
			}
		}
		if variant && !exact {
			f.foundPair()
		}
		if _, err := d.Token(); err != nil || exact {
			return err
		}
	case st.Kind == Index && tok == json.Delim('['):
		n := 0
		for ; d.More(); n++ {
			if n == st.Index {
				err = f.follow(d, path[1:])
			} else {
				_, err = foldPairs(d)
			}
			if err != nil {
				return err
			}
		}
		if _, err := d.Token(); err != nil || st.Index < n {
			return err
		}
	case st.Kind == Each && tok == json.Delim('['):
		for d.More() {
			if err := f.follow(d, path[1:]); err != nil {
				return err
			}
		}
		_, err := d.Token()
		return err
	default:
		if err := skipRest(d, tok); err != nil {
			return err
		}
	}
	f.nothing(path)
	return nil
}

// nothing notes the type error that a path meets when its first step
// selects nothing: the first step after it that needs a string meets
// null, unless a projection comes first or is that step.
func (f *pathFacts) nothing(path []Step) {
	if path[0].Kind == Each {
		return
	}
	for _, st := range path[1:] {
		if st.Kind == Each {
			return
		}
		if st.Kind == Document || st.Kind == Transform {
			f.typeGot = append(f.typeGot, "null")
			return
		}
	}
}

// followString follows path, whose first step needs a string, in the
// string s.
func (f *pathFacts) followString(s string, path []Step) {
	for len(path) > 0 {
		switch st := path[0]; st.Kind {
		case Transform:
			out, _, _ := st.Transform([]byte(s), Budget{})
			s, path = string(out), path[1:]
			continue
		case Document:
			text := []byte(s)
			if !json.Valid(text) || nesting(text) > maxDepth {
				f.badDoc = true
			}
			inner := *f
			inner.quoted = true
			_ = inner.read(text, path[1:])
			inner.quoted = f.quoted
			*f = inner
		case Type:
		default: // a Member, Index or Each step selects nothing in a string
			f.nothing(path)
		}
		return
	}
}

// skipRest reads the rest of the value that tok opened, if it did.
func skipRest(d *json.Decoder, tok json.Token) error {
	if delim, ok := tok.(json.Delim); ok {
		_, err := foldPairsIn(d, delim)
		return err
	}
	return nil
}

// nesting is the depth of the most nested array or object of valid text.
func nesting(text []byte) int {
	depth, most := 0, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			for i++; text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			most = max(most, depth)
		case ']', '}':
			depth--
		}
	}
	return most
}

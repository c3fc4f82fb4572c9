package keyformat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A textWriter writes the text that a Format hashes to w, a hash, a few
// KiB at a time: the text of a large value, a whole event say, is never
// held whole, and costs the invocation no more than its pieces (on a 6 MB
// event keyed and validated whole, 52 MiB of buffers in the library's
// format, 219 MiB in Python's, before it wrote so).
type textWriter struct {
	w   io.Writer
	buf []byte
	// enc writes the canonical text's scalars but the plainest, into
	// out: made when first needed.
	enc *json.Encoder
	out *bytes.Buffer
}

// spillAt is the size past which the buffer goes to w, between values.
const spillAt = 16 << 10

// spill writes the buffer to w once it holds spillAt bytes or more.
func (t *textWriter) spill() {
	if len(t.buf) >= spillAt {
		t.flush()
	}
}

// flush writes the buffer to w. A hash never fails to write.
func (t *textWriter) flush() {
	t.w.Write(t.buf)
	t.buf = t.buf[:0]
}

// canonical writes v, made of what encoding/json decodes, as
// encoding/json writes it without HTML escaping (see Encode): objects
// with their names sorted by their bytes, at every depth, as its map
// encoder sorts them, and each scalar, names included, by encoding/json
// itself.
func (t *textWriter) canonical(v any) error {
	switch v := v.(type) {
	case map[string]any:
		t.buf = append(t.buf, '{')
		for i, name := range sortedNames(v) {
			if i > 0 {
				t.buf = append(t.buf, ',')
			}
			if err := t.scalar(name); err != nil {
				return atMember(err, name)
			}
			t.buf = append(t.buf, ':')
			if err := t.canonical(v[name]); err != nil {
				return atMember(err, name)
			}
			t.spill()
		}
		t.buf = append(t.buf, '}')
	case []any:
		t.buf = append(t.buf, '[')
		for i, e := range v {
			if i > 0 {
				t.buf = append(t.buf, ',')
			}
			if err := t.canonical(e); err != nil {
				return atIndex(err, i)
			}
			t.spill()
		}
		t.buf = append(t.buf, ']')
	default:
		return t.scalar(v)
	}
	return nil
}

// scalar writes v, which is not an array or an object, as encoding/json
// does, refusing a string that is not UTF-8. The scalars whose text
// encoding/json writes as they are (null, booleans, strings of printable
// ASCII but quotes and backslashes, valid numbers) are written here,
// sparing most keys a json.Encoder: 3 of a replay's 35 allocations.
func (t *textWriter) scalar(v any) error {
	switch v := v.(type) {
	case nil:
		t.buf = append(t.buf, "null"...)
		return nil
	case bool:
		t.buf = strconv.AppendBool(t.buf, v)
		return nil
	case string:
		if !utf8.ValidString(v) {
			return &InvalidTextError{Path: "@"}
		}
		if plain(v) {
			t.buf = append(append(append(t.buf, '"'), v...), '"')
			return nil
		}
	case json.Number:
		if n := string(v); n != "" && (n[0] == '-' || n[0] >= '0' && n[0] <= '9') && json.Valid([]byte(n)) {
			t.buf = append(t.buf, n...)
			return nil
		}
	}
	if t.enc == nil {
		t.out = new(bytes.Buffer)
		t.enc = json.NewEncoder(t.out)
		t.enc.SetEscapeHTML(false)
	}
	t.out.Reset()
	if err := t.enc.Encode(v); err != nil {
		return err
	}
	t.buf = append(t.buf, bytes.TrimSuffix(t.out.Bytes(), []byte("\n"))...) // the newline that ends each value
	return nil
}

// plain reports whether s is printable ASCII without a quote or a
// backslash: text that encoding/json writes in quotes as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// quote writes s as a JSON string whose characters chars appends, a
// piece at a time, refusing text that is not UTF-8.
func (t *textWriter) quote(s string, chars func(dst []byte, s string) []byte) error {
	if !utf8.ValidString(s) {
		return &InvalidTextError{Path: "@"}
	}
	t.buf = append(t.buf, '"')
	for len(s) > 0 {
		n := min(len(s), 4<<10) // ending at a rune's end
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		t.buf = chars(t.buf, s[:n])
		s = s[n:]
		t.spill()
	}
	t.buf = append(t.buf, '"')
	return nil
}

// sortedNames returns the names of m in the order of their bytes.
func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// InvalidTextError refuses a string of the selected value, or a member
// name, that is not UTF-8, as a JMESPath function may return one: every
// format would write its bad bytes as U+FFFD, like U+FFFD itself, and two
// requests that differ there would share a hash. Path is where it is in
// the selected value.
type InvalidTextError struct {
	Path string
}

func (e *InvalidTextError) Error() string {
	return fmt.Sprintf("the string at %s is not UTF-8: written as U+FFFD, requests that differ in it would share a hash", e.Path)
}

// atIndex and atMember prefix the Path of an *InexactError or an
// *InvalidTextError from an array's element or an object's member with
// the element's index or the member's name, as the error goes up through
// the value: the path is built only on failure.
func atIndex(err error, i int) error {
	return atPath(err, "["+strconv.Itoa(i)+"]")
}

func atMember(err error, name string) error {
	if !plainIdentifier(name) {
		name = string(appendTypeScriptString(nil, name)) // a JMESPath quoted identifier is a JSON string
	}
	return atPath(err, name)
}

func atPath(err error, step string) error {
	var path *string
	switch e := err.(type) {
	case *InexactError:
		path = &e.Path
	case *InvalidTextError:
		path = &e.Path
	default:
		return err
	}
	switch {
	case *path == "@":
		*path = step
	case (*path)[0] == '[':
		*path = step + *path
	default:
		*path = step + "." + *path
	}
	return err
}

// plainIdentifier reports whether name is a JMESPath unquoted identifier:
// [A-Za-z_][A-Za-z0-9_]*.
func plainIdentifier(name string) bool {
	for i := range len(name) {
		c := name[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return name != ""
}

package jmespath

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// The functions of Powertools for AWS Lambda, with the meaning they have
// there. Each fails with an *InvalidValueError on text it cannot decode,
// never with a silent null, and on an output past what is left of the
// search's budget (see WithDecodeLimit), which it checks before decoding
// where it can, and otherwise as it decodes.
var (
	powertoolsJSON       = decoder("powertools_json", fnPowertoolsJSON)
	powertoolsBase64     = decoder("powertools_base64", fnPowertoolsBase64)
	powertoolsBase64Gzip = decoder("powertools_base64_gzip", fnPowertoolsBase64Gzip)
)

// decoder registers a built-in function of one string that decodes it,
// within the search's budget.
func decoder(name string, fn func(s string, b *strictjson.Budget) (any, error)) *Function {
	f := builtin(name, false, nil, TypeString)
	f.decode = func(a []any, b *strictjson.Budget) (any, error) { return fn(a[0].(string), b) }
	return f
}

// decodeStep is the step by which SearchJSON follows a call of fn in the
// raw bytes, if fn is a Powertools function: powertools_json reads the
// string as a document in the same pass, the others make a string of it.
func decodeStep(fn *Function) (strictjson.Step, bool) {
	switch fn {
	case powertoolsJSON:
		return strictjson.Step{Kind: strictjson.Document, Name: fn.Name}, true
	case powertoolsBase64:
		return strictjson.Step{Kind: strictjson.Transform, Name: fn.Name, Transform: base64Text}, true
	case powertoolsBase64Gzip:
		return strictjson.Step{Kind: strictjson.Transform, Name: fn.Name, Transform: gzipText}, true
	}
	return strictjson.Step{}, false
}

// fnPowertoolsJSON decodes JSON text, numbers as json.Number, refusing
// text that encoding/json could read two ways (see SearchJSON).
func fnPowertoolsJSON(s string, b *strictjson.Budget) (any, error) {
	const fn = "powertools_json"
	if err := b.Spend(len(s)); err != nil { // the copy of s that Decode reads
		return nil, tooLarge(fn, err)
	}
	v, err := strictjson.Decode([]byte(s), b)
	var syntaxErr *strictjson.SyntaxError
	var limitErr *strictjson.LimitError
	switch {
	case errors.As(err, &syntaxErr):
		return nil, &InvalidValueError{Function: fn, Msg: "invalid JSON", Err: err}
	case errors.As(err, &limitErr):
		return nil, tooLarge(fn, limitErr)
	case err != nil:
		return nil, &InvalidValueError{Function: fn, Msg: "ambiguous JSON", Err: err}
	}
	return v, nil
}

func fnPowertoolsBase64(s string, b *strictjson.Budget) (any, error) {
	return textOf(s, b, base64Text)
}

func fnPowertoolsBase64Gzip(s string, b *strictjson.Budget) (any, error) {
	return textOf(s, b, gzipText)
}

// textOf is what decode makes of s within b, as a string: the array it
// made, which nothing else holds, as it is, where string(out) would copy
// what may be megabytes. decode only reads s.
func textOf(s string, b *strictjson.Budget, decode func([]byte, strictjson.Budget) ([]byte, strictjson.Budget, error)) (any, error) {
	var within strictjson.Budget // none, for a nil b
	if b != nil {
		within = *b
	}
	out, within, err := decode(unsafe.Slice(unsafe.StringData(s), len(s)), within)
	if b != nil {
		*b = within
	}
	if err != nil {
		return nil, err
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), nil
}

// base64Text decodes text as powertools_base64 does, within b. It only
// reads text.
func base64Text(text []byte, b strictjson.Budget) ([]byte, strictjson.Budget, error) {
	const fn = "powertools_base64"
	out, err := base64Bytes(fn, text, &b)
	if err == nil {
		err = utf8Text(fn, out)
	}
	return out, b, err
}

// base64Bytes decodes padded base64 text, which may be broken into lines,
// spending the size of its output, known before decoding, from b.
func base64Bytes(fn string, text []byte, b *strictjson.Budget) ([]byte, error) {
	n, most := base64Len(text)
	if err := b.Spend(n); err != nil {
		return nil, tooLarge(fn, err)
	}
	// Text that is not base64 may decode a quantum's bytes before the
	// padding that makes it fail: room for them.
	out := make([]byte, most)
	m, err := base64.StdEncoding.Decode(out, text)
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid base64", Err: err}
	}
	return out[:m], nil
}

// gzipText decodes text as powertools_base64_gzip does, within b: base64,
// then gzip, in one stream, so that only the output is held. It only
// reads text.
func gzipText(text []byte, b strictjson.Budget) ([]byte, strictjson.Budget, error) {
	const fn = "powertools_base64_gzip"
	if err := b.Spend(gzipReaderCost); err != nil {
		return nil, b, tooLarge(fn, err)
	}
	zr, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(text)))
	var out []byte
	if err == nil {
		out, err = readAtMost(zr, &b, gzipSize(text))
	}
	var limitErr *strictjson.LimitError
	var base64Err base64.CorruptInputError
	switch {
	case errors.As(err, &limitErr):
		return nil, b, tooLarge(fn, limitErr)
	case errors.As(err, &base64Err):
		return nil, b, &InvalidValueError{Function: fn, Msg: "invalid base64", Err: err}
	case err != nil:
		return nil, b, &InvalidValueError{Function: fn, Msg: "invalid gzip", Err: err}
	}
	return out, b, utf8Text(fn, out)
}

// gzipReaderCost is what a gzip reader over a base64 decoder allocates,
// the decompressor's window and tables mostly: 47 KB in Go 1.26.
const gzipReaderCost = 48 << 10

// gzipSize is the size that the gzip data in base64 text says it
// decompresses to: the last member's, modulo 2^32, in the last four bytes
// of its trailer, which the last two quanta of the text hold; 0 when
// they do not decode. A producer may lie in it, and then pays for its
// lie: it is where readAtMost starts.
func gzipSize(text []byte) int {
	var tail []byte
	for i := len(text) - 1; i >= 0 && len(tail) < 8; i-- {
		if c := text[i]; c != '\r' && c != '\n' {
			tail = append(tail, c)
		}
	}
	slices.Reverse(tail)
	z, err := base64.StdEncoding.DecodeString(string(tail))
	if err != nil || len(z) < 4 {
		return 0
	}
	return int(binary.LittleEndian.Uint32(z[len(z)-4:]))
}

// readAtMost reads r to its end, within b: into a buffer of size bytes
// first, which it doubles while it fills, spending each new buffer's
// size, up to what is left of b. So a small input cannot make a large
// output, and what it allocates is what it spends: exactly the output
// when size is right, as gzip's trailer says it for one member.
func readAtMost(r io.Reader, b *strictjson.Budget, size int) ([]byte, error) {
	size = max(size, 512)
	if size > b.Left() {
		// More than the budget holds: from the trailer, a likely size
		// past it, where the budget ends. Then one byte more says so.
		size = b.Left()
	}
	if err := b.Spend(size); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			var probe [1]byte
			switch _, err := io.ReadFull(r, probe[:]); err {
			case io.EOF:
				return buf, nil
			case nil:
			default:
				return nil, err
			}
			// Full, and more to come.
			n := min(2*cap(buf), b.Left())
			if n <= cap(buf) {
				return nil, b.Spend(b.Left() + 1) // fails: the budget cannot hold more
			}
			b.Spend(n) // within what is left
			grown := make([]byte, len(buf), n)
			copy(grown, buf)
			buf = append(grown, probe[0])
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// base64Len is the length n of what text decodes to as padded base64,
// which Decode reads ignoring '\r' and '\n': known before decoding. most
// is what Decode may write, at most two bytes more, for text that fails
// at its padding.
func base64Len(text []byte) (n, most int) {
	count := len(text) - bytes.Count(text, []byte{'\r'}) - bytes.Count(text, []byte{'\n'})
	most = count / 4 * 3
	n = most
	text = bytes.TrimRight(text, "\r\n")
	for i := 0; i < 2 && bytes.HasSuffix(text, []byte("=")); i++ {
		text = bytes.TrimRight(text[:len(text)-1], "\r\n")
		n--
	}
	return max(n, 0), most
}

// tooLarge is a Powertools function's refusal of a decoding past the
// budget: err, a *strictjson.LimitError, says how far past.
func tooLarge(fn string, err error) error {
	var le *strictjson.LimitError
	errors.As(err, &le)
	return &InvalidValueError{Function: fn, Msg: "too large", Err: &TooLargeError{Function: fn, Limit: le.Limit, Size: le.Len}}
}

var errNotUTF8 = errors.New("decoded bytes are not valid UTF-8")

func utf8Text(fn string, b []byte) error {
	if !utf8.Valid(b) {
		return &InvalidValueError{Function: fn, Msg: "invalid text", Err: errNotUTF8}
	}
	return nil
}

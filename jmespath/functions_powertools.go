package jmespath

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// The functions of Powertools for AWS Lambda, with the meaning they have
// there. Each fails with an *InvalidValueError on text it cannot decode,
// never with a silent null, and on an output past the expression's decode
// limit (see WithDecodeLimit), which it checks before decoding where it
// can, and otherwise as it decodes.
var (
	powertoolsJSON = decoder("powertools_json", fnPowertoolsJSON)
	_              = decoder("powertools_base64", fnPowertoolsBase64)
	_              = decoder("powertools_base64_gzip", fnPowertoolsBase64Gzip)
)

// decoder registers a built-in function of one string that decodes it,
// within the expression's decode limit.
func decoder(name string, fn func(s string, limit int) (any, error)) *Function {
	f := builtin(name, false, nil, TypeString)
	f.decode = func(a []any, limit int) (any, error) { return fn(a[0].(string), limit) }
	return f
}

// fnPowertoolsJSON decodes JSON text, numbers as json.Number, refusing
// text that encoding/json could read two ways (see SearchJSON).
func fnPowertoolsJSON(s string, limit int) (any, error) {
	const fn = "powertools_json"
	if len(s) > limit {
		return nil, tooLarge(fn, limit, len(s))
	}
	v, err := strictjson.Decode([]byte(s))
	var syntaxErr *strictjson.SyntaxError
	switch {
	case errors.As(err, &syntaxErr):
		return nil, &InvalidValueError{Function: fn, Msg: "invalid JSON", Err: err}
	case err != nil:
		return nil, &InvalidValueError{Function: fn, Msg: "ambiguous JSON", Err: err}
	}
	return v, nil
}

func fnPowertoolsBase64(s string, limit int) (any, error) {
	const fn = "powertools_base64"
	if n := base64Len(s); n > limit {
		return nil, tooLarge(fn, limit, n)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid base64", Err: err}
	}
	return utf8Text(fn, b)
}

func fnPowertoolsBase64Gzip(s string, limit int) (any, error) {
	const fn = "powertools_base64_gzip"
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid base64", Err: err}
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid gzip", Err: err}
	}
	// A byte past the limit is all it takes to refuse: decompression
	// stops there, so that a small input cannot make a huge output.
	out, more, err := readAtMost(zr, limit)
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid gzip", Err: err}
	}
	if more {
		return nil, tooLarge(fn, limit, limit+1)
	}
	return utf8Text(fn, out)
}

// readAtMost reads r to its end into a buffer that doubles as it fills,
// or stops after n bytes when r holds more, and then reports more: what
// it allocates stays under twice n. On TestDecodeLimitGzipBomb's 16 MiB,
// the search allocates 34 MB so, where io.ReadAll's chunks and final
// copy took 37 MB, and 73 MB under -race.
func readAtMost(r io.Reader, n int) (b []byte, more bool, err error) {
	buf := make([]byte, 0, min(n, 4096))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*cap(buf), n))
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	var probe [1]byte
	switch _, err := io.ReadFull(r, probe[:]); err {
	case io.EOF:
		return buf, false, nil
	case nil:
		return buf, true, nil
	default:
		return nil, false, err
	}
}

// base64Len is the length of what s decodes to as padded base64, which
// DecodeString reads ignoring '\r' and '\n': known before decoding.
func base64Len(s string) int {
	n := len(s) - strings.Count(s, "\r") - strings.Count(s, "\n")
	size := n / 4 * 3
	s = strings.TrimRight(s, "\r\n")
	for i := 0; i < 2 && strings.HasSuffix(s, "="); i++ {
		s = strings.TrimRight(s[:len(s)-1], "\r\n")
		size--
	}
	return max(size, 0)
}

func tooLarge(fn string, limit, size int) error {
	return &InvalidValueError{Function: fn, Msg: "too large", Err: &TooLargeError{Function: fn, Limit: limit, Size: size}}
}

var errNotUTF8 = errors.New("decoded bytes are not valid UTF-8")

func utf8Text(fn string, b []byte) (any, error) {
	if !utf8.Valid(b) {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid text", Err: errNotUTF8}
	}
	return string(b), nil
}

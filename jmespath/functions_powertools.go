package jmespath

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// The functions of Powertools for AWS Lambda, with the meaning they have
// there. Each fails with an *InvalidValueError on text it cannot decode,
// never with a silent null.
var (
	powertoolsJSON = builtin("powertools_json", false, fnPowertoolsJSON, TypeString)
	_              = builtin("powertools_base64", false, fnPowertoolsBase64, TypeString)
	_              = builtin("powertools_base64_gzip", false, fnPowertoolsBase64Gzip, TypeString)
)

// fnPowertoolsJSON decodes JSON text, numbers as json.Number, refusing
// member names that encoding/json would take for one (see SearchJSON).
func fnPowertoolsJSON(a []any) (any, error) {
	v, err := strictjson.Decode([]byte(a[0].(string)))
	var syntaxErr *strictjson.SyntaxError
	switch {
	case errors.As(err, &syntaxErr):
		return nil, &InvalidValueError{Function: "powertools_json", Msg: "invalid JSON", Err: err}
	case err != nil:
		return nil, &InvalidValueError{Function: "powertools_json", Msg: "ambiguous JSON", Err: err}
	}
	return v, nil
}

func fnPowertoolsBase64(a []any) (any, error) {
	b, err := base64.StdEncoding.DecodeString(a[0].(string))
	if err != nil {
		return nil, &InvalidValueError{Function: "powertools_base64", Msg: "invalid base64", Err: err}
	}
	return utf8Text("powertools_base64", b)
}

func fnPowertoolsBase64Gzip(a []any) (any, error) {
	const fn = "powertools_base64_gzip"
	b, err := base64.StdEncoding.DecodeString(a[0].(string))
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid base64", Err: err}
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid gzip", Err: err}
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid gzip", Err: err}
	}
	return utf8Text(fn, out)
}

var errNotUTF8 = errors.New("decoded bytes are not valid UTF-8")

func utf8Text(fn string, b []byte) (any, error) {
	if !utf8.Valid(b) {
		return nil, &InvalidValueError{Function: fn, Msg: "invalid text", Err: errNotUTF8}
	}
	return string(b), nil
}

package httpapi

import (
	"encoding/json"
	"errors"
	"strings"
)

// keyHeader is the request header that carries the key
// (draft-ietf-httpapi-idempotency-key-header).
const keyHeader = "Idempotency-Key"

// The reasons a request's Idempotency-Key header is refused. Each is a
// 400: sending the same request again cannot succeed.
var (
	// errKeyAmbiguous: the header comes more than once (in
	// multiValueHeaders, or joined by a comma into one value, as an HTTP
	// API and a function URL join a repeated header), or under more than
	// one spelling, or the two maps of a REST API or ALB event disagree on
	// it. Readers of such a request can take different keys from it (the
	// first, the last, one per spelling), so none is taken.
	errKeyAmbiguous = errors.New("the Idempotency-Key header is given more than once")
	// errKeyMalformed: the value is not an sf-string (RFC 8941) or a
	// bare token, or is empty.
	errKeyMalformed = errors.New("the Idempotency-Key header is not a string")
)

// readKey returns the key that the request's Idempotency-Key header
// carries, with present false when it has none, or an error when the
// header is ambiguous or malformed. single and multi are the event's
// headers and multiValueHeaders: HTTP API and function URL events carry
// only the first, with names lower-cased; REST API and ALB events keep the
// client's spelling, in one map or both.
//
// Fail closed: any name that equals Idempotency-Key ignoring case, with
// Unicode folding as strings.EqualFold does, is taken for the header, and
// more than one such name, a name that matches only through non-ASCII
// folding (the Kelvin sign for K), a repeated value, or maps that disagree
// make the header ambiguous.
func readKey(single map[string]string, multi map[string][]string) (key string, present bool, err error) {
	name := ""
	for n := range single {
		if name, err = sameHeader(name, n); err != nil {
			return "", false, err
		}
	}
	for n := range multi {
		if name, err = sameHeader(name, n); err != nil {
			return "", false, err
		}
	}
	if name == "" {
		return "", false, nil
	}
	value, inSingle := single[name]
	if values, inMulti := multi[name]; inMulti {
		switch {
		case len(values) == 0:
			return "", true, errKeyMalformed
		case len(values) > 1, inSingle && values[0] != value:
			return "", true, errKeyAmbiguous
		}
		value = values[0]
	}
	if joined(value) {
		return "", true, errKeyAmbiguous
	}
	key, err = parseKey(value)
	return key, true, err
}

// joined reports whether v is two keys or more joined by commas, as HTTP
// APIs and function URLs join the values of a header sent more than once
// (RFC 9110, section 5.3), each of which parseKey would take: "k1,k2",
// "\"k1\", \"k2\"". A comma inside an sf-string does not count. A value with
// a comma and a part that is no key is malformed, not repeated.
func joined(v string) bool {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			parts = append(parts, v[start:i])
			start = i + 1
		}
	}
	if len(parts) == 0 {
		return false
	}
	for _, p := range append(parts, v[start:]) {
		if _, err := parseKey(p); err != nil {
			return false
		}
	}
	return true
}

// sameHeader returns the spelling of the key header seen so far after
// seeing the name n: seen, or n when n is the first spelling of it.
func sameHeader(seen, n string) (string, error) {
	if !strings.EqualFold(n, keyHeader) {
		return seen, nil
	}
	if len(n) != len(keyHeader) || (seen != "" && n != seen) {
		// A longer name folds to it through a multi-byte rune: some
		// readers take it for the header, others do not.
		return "", errKeyAmbiguous
	}
	return n, nil
}

// parseKey returns the key in a header value: an sf-string
// ("8e03978e-40d5-43e8-bc93-6894a57f9324" in double quotes), as the draft
// defines the field, or a bare token, as many clients send it; both give
// the same key for the same characters. Surrounding spaces and tabs are
// dropped, as HTTP parsers drop them.
//
// Refused, so that one value has one meaning: an empty key; anything after
// the closing quote (RFC 8941 parameters such as ;a=1; a second value
// joined by a comma, which readKey reports as a repeated header first); in
// a bare token, a space, a double quote, a backslash, a comma or a
// semicolon; and, in either, control characters and bytes outside ASCII.
func parseKey(v string) (string, error) {
	v = strings.Trim(v, " \t")
	if v == "" {
		return "", errKeyMalformed
	}
	if v[0] == '"' {
		return parseString(v)
	}
	for i := range len(v) {
		if c := v[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"\,;`, c) >= 0 {
			return "", errKeyMalformed
		}
	}
	return v, nil
}

// parseString parses v, which starts with a double quote, as an RFC 8941
// sf-string that makes up the whole of v (section 4.2.5 of the RFC).
func parseString(v string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			i++
			if i == len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", errKeyMalformed
			}
			b.WriteByte(v[i])
		case c == '"':
			if i != len(v)-1 || b.Len() == 0 {
				return "", errKeyMalformed
			}
			return b.String(), nil
		case c < ' ' || c >= 0x7f:
			return "", errKeyMalformed
		default:
			b.WriteByte(c)
		}
	}
	return "", errKeyMalformed // no closing quote
}

// scopeMember is the member that the adapter adds to the event it gives
// the middleware when it keys on the header, and the middleware's key
// expression: the key is the hash of its value, a scope. No event type's
// member folds to this name, so the middleware's strict reading of the
// path finds exactly one.
const scopeMember = "httpapiIdempotencyKey"

// scope is what a key made from the header identifies: the key, sent by
// one client for one method on one path. The draft leaves the scope to the
// server; keys are chosen by clients, so the same key on another route, or
// from another client, is another request.
type scope struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Client string `json:"client"`
	Key    string `json:"key"`
}

// withScope returns event, a JSON object, with s added as its member
// scopeMember.
func withScope(event []byte, s scope) ([]byte, error) {
	member, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(event)+len(scopeMember)+len(member)+4)
	out = append(out, `{"`+scopeMember+`":`...)
	out = append(out, member...)
	if len(event) > len("{}") {
		out = append(out, ',')
	}
	return append(out, event[1:]...), nil
}

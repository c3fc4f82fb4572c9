package idempotency

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/gopowertools/lambda/internal/keyformat"
)

// The edge's JSON: the event decoded for the handler, its result encoded
// for the record and the caller, and a stored response decoded for a
// replay, each as aws-lambda-go does it.

// encodeError reports that the user's code succeeded but its result could
// not be encoded. Its effect has happened, so the key is completed (with no
// response) rather than released for a rerun.
type encodeError struct{ err error }

func (e *encodeError) Error() string { return e.err.Error() }

// unwrapEncode gives the caller the encoding error itself.
func unwrapEncode(err error) error {
	if encErr, ok := err.(*encodeError); ok {
		return encErr.err
	}
	return err
}

// decodeEvent decodes the event into in for the handler, as aws-lambda-go
// does with the same options (lambda.WithUseNumber,
// lambda.WithDisallowUnknownFields), and refuses data after the value as
// json.Unmarshal does.
func (e *engine) decodeEvent(payload []byte, in any) error {
	if !e.useNumber && !e.disallowUnknown {
		return json.Unmarshal(payload, in)
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	if e.useNumber {
		d.UseNumber()
	}
	if e.disallowUnknown {
		d.DisallowUnknownFields()
	}
	if err := d.Decode(in); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("idempotency: data after the event's JSON value")
	}
	return nil
}

// encode encodes v as aws-lambda-go encodes a response. A failure is an
// *encodeError: the user's code has succeeded by then.
func encode(v any) ([]byte, error) {
	b, err := keyformat.Encode(v)
	if err != nil {
		return nil, &encodeError{err: err}
	}
	return b, nil
}

// decodeStored decodes the response of a replay into Out.
func decodeStored[Out any](res result) (Out, error) {
	var stored, zero Out
	if err := decodeResponse(res.key, res.response, &stored); err != nil {
		return zero, err
	}
	return stored, nil
}

// decodeResponse decodes data, the stored response of the record key,
// into what v points to, for a replay that gives it as a value (a
// function wrapper's, WithReplayHook's, httpapi's): a response that does
// not decode is a *CorruptedRecordError, the same wherever it is met.
func decodeResponse(key string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return &CorruptedRecordError{Key: key, Reason: fmt.Sprintf("the stored response does not decode into %v: %v", reflect.TypeOf(v).Elem(), err)}
	}
	return nil
}

// storedJSON refuses data, the stored response of the record key, when it
// cannot be JSON, for a replay that gives the bytes as they are stored (a
// Handler's without a replay hook). Every response is stored as its
// handler's result encoded; other bytes are a record this configuration
// cannot read, such as responsestore's binary envelope met by a function
// without it in a rolling deploy, and are refused rather than given to the
// caller as a success. Only the first byte is looked at: it tells the
// envelope and any other binary from JSON, and json.Valid over the whole
// response cost 6,400 instructions a replay on the 2.2 KB event, a tenth
// of a replay.
func storedJSON(key string, data []byte) error {
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	if i == len(data) || !strings.ContainsRune(`{["-0123456789tfn`, rune(data[i])) {
		return &CorruptedRecordError{Key: key, Reason: "the stored response is not JSON: it was written through a store wrapper this function does not have (responsestore), or changed outside the library"}
	}
	return nil
}

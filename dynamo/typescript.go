package dynamo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Powertools for AWS Lambda (TypeScript) keeps a response in the data
// attribute as @aws-sdk/util-dynamodb's marshall writes the handler's
// result: DynamoDB's own types (M for an object, L, S, N, BOOL, NULL), where
// Python, and this library, keep JSON text (S). An invocation in
// idempotency.PowertoolsTypeScript mode writes the response that way, so
// that a TypeScript duplicate replays the object; a record read in that
// mode reads them back as JSON, and an S value as a string response.

// maxNesting is how deep DynamoDB lets maps and lists nest.
const maxNesting = 32

// typeScript reports whether the invocation of ctx keeps responses as
// Powertools TypeScript does.
func typeScript(ctx context.Context) bool {
	return keyformat.ModeOf(ctx) == keyformat.TypeScript
}

// typeScriptData sets the data attribute of item, encoded from rec, to the
// response as DynamoDB's types when ctx is in PowertoolsTypeScript mode.
// A response that DynamoDB cannot hold that way (a number past its 38
// digits or its range, nesting deeper than 32) gives an error that wraps
// idempotency.ErrUnstorableResponse: the middleware then completes the
// record without it, as for a response over 400 KB.
func (o *Options) typeScriptData(ctx context.Context, item map[string]types.AttributeValue, rec *idempotency.Record) error {
	if !typeScript(ctx) || len(rec.Response) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(rec.Response))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("dynamo: complete %q: %w: it is not JSON: %v", rec.Key, idempotency.ErrUnstorableResponse, err)
	}
	av, err := attributeValue(v, 0)
	if err != nil {
		return fmt.Errorf("dynamo: complete %q: %w as DynamoDB values, as Powertools TypeScript keeps it: %v", rec.Key, idempotency.ErrUnstorableResponse, err)
	}
	item[o.DataAttr] = av
	return nil
}

// attributeValue returns v, decoded JSON, as marshall writes it.
func attributeValue(v any, depth int) (types.AttributeValue, error) {
	switch v := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: v}, nil
	case string:
		return &types.AttributeValueMemberS{Value: v}, nil
	case json.Number:
		if err := checkNumber(string(v)); err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: string(v)}, nil
	}
	if depth == maxNesting {
		return nil, fmt.Errorf("nested deeper than DynamoDB's %d levels", maxNesting)
	}
	switch v := v.(type) {
	case []any:
		l := make([]types.AttributeValue, len(v))
		for i, e := range v {
			var err error
			if l[i], err = attributeValue(e, depth+1); err != nil {
				return nil, err
			}
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case map[string]any:
		m := make(map[string]types.AttributeValue, len(v))
		for name, e := range v {
			var err error
			if m[name], err = attributeValue(e, depth+1); err != nil {
				return nil, err
			}
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unexpected %T", v)
}

// checkNumber reports whether DynamoDB can hold the JSON number text: 38
// significant digits at most, magnitude from 1e-130 to under 1e126.
func checkNumber(text string) error {
	digits, point, ok := keyformat.Digits(text) // the value is 0.digits × 10^point
	switch {
	case !ok || (digits != "" && (point-1 < -130 || point-1 > 125)):
		return fmt.Errorf("number %s: out of DynamoDB's range", text)
	case len(digits) > 38:
		return fmt.Errorf("number %s: more than DynamoDB's 38 significant digits", text)
	}
	return nil
}

// decodeIn decodes item as decode does, but for an invocation in
// PowertoolsTypeScript mode, whose data attribute, when it is not B (bytes
// as they are), holds a response as Powertools TypeScript keeps it: S for
// a string response, DynamoDB's other types for the rest.
func (o *Options) decodeIn(ctx context.Context, key string, item map[string]types.AttributeValue) (*idempotency.Record, error) {
	data := item[o.DataAttr]
	if _, raw := data.(*types.AttributeValueMemberB); data == nil || raw || !typeScript(ctx) {
		return o.decode(key, item)
	}
	rest := maps.Clone(item)
	delete(rest, o.DataAttr)
	rec, err := o.decode(key, rest)
	if err != nil {
		return nil, err
	}
	if rec.Response, err = attributeJSON(data); err != nil {
		return nil, &idempotency.CorruptedRecordError{Key: key, Reason: fmt.Sprintf("attribute %q: %v", o.DataAttr, err)}
	}
	return rec, nil
}

// attributeJSON returns the JSON of a response that Powertools TypeScript
// stored as DynamoDB's types, its members in key order.
func attributeJSON(av types.AttributeValue) ([]byte, error) {
	v, err := attributeAny(av)
	if err != nil {
		return nil, err
	}
	return keyformat.Encode(v)
}

// attributeAny returns av as encoding/json would decode its JSON.
func attributeAny(av types.AttributeValue) (any, error) {
	switch av := av.(type) {
	case *types.AttributeValueMemberNULL:
		return nil, nil
	case *types.AttributeValueMemberBOOL:
		return av.Value, nil
	case *types.AttributeValueMemberS:
		return av.Value, nil
	case *types.AttributeValueMemberN:
		n := jsonNumber(av.Value)
		if !json.Valid([]byte(n)) {
			return nil, fmt.Errorf("number %q", av.Value)
		}
		return json.Number(n), nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(av.Value))
		for i, e := range av.Value {
			var err error
			if l[i], err = attributeAny(e); err != nil {
				return nil, err
			}
		}
		return l, nil
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(av.Value))
		for name, e := range av.Value {
			var err error
			if m[name], err = attributeAny(e); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, errors.New(typeName(av) + " has no JSON form")
}

// jsonNumber returns a DynamoDB number in JSON's syntax, which is
// narrower: no "+" sign, no point without a digit on each side.
func jsonNumber(n string) string {
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimLeft(n, "+-")
	mant, exp, hasExp := strings.Cut(n, "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(n, "E")
	}
	if strings.HasPrefix(mant, ".") {
		mant = "0" + mant
	}
	mant = strings.TrimSuffix(mant, ".")
	if neg {
		mant = "-" + mant
	}
	if hasExp {
		return mant + "e" + exp
	}
	return mant
}

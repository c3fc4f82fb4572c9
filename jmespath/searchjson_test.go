package jmespath

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// apiEvent is an API Gateway proxy event of about 2 KB.
var apiEvent = []byte(`{
  "resource": "/orders", "path": "/orders", "httpMethod": "POST",
  "headers": {"Accept": "*/*", "Content-Type": "application/json", "Host": "abc.execute-api.us-east-1.amazonaws.com",
    "User-Agent": "curl/8.4.0", "X-Amzn-Trace-Id": "Root=1-65f0a1b2-3c4d5e6f7a8b9c0d1e2f3a4b", "x-idem": "key-\u00e9-1",
    "X-Forwarded-For": "203.0.113.7", "X-Forwarded-Port": "443", "X-Forwarded-Proto": "https"},
  "multiValueHeaders": {"Accept": ["*/*"], "Content-Type": ["application/json"], "X-Forwarded-For": ["203.0.113.7"]},
  "queryStringParameters": null, "multiValueQueryStringParameters": null, "pathParameters": null, "stageVariables": null,
  "requestContext": {"resourceId": "a1b2c3", "resourcePath": "/orders", "httpMethod": "POST",
    "extendedRequestId": "Kx9aZF2hoAMFt7g=", "requestTime": "29/Nov/2026:17:48:00 +0000", "path": "/prod/orders",
    "accountId": "123456789012", "protocol": "HTTP/1.1", "stage": "prod", "domainPrefix": "abc",
    "requestTimeEpoch": 1795888080000, "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
    "identity": {"cognitoIdentityPoolId": null, "accountId": null, "cognitoIdentityId": null, "caller": null,
      "sourceIp": "203.0.113.7", "principalOrgId": null, "accessKey": null, "cognitoAuthenticationType": null,
      "cognitoAuthenticationProvider": null, "userArn": null, "userAgent": "curl/8.4.0", "user": null},
    "domainName": "abc.execute-api.us-east-1.amazonaws.com", "apiId": "abc"},
  "body": "{\"order_id\": 12345678901234567890, \"customer\": {\"id\": \"c-42\", \"tier\": \"gold\"}, \"items\": [{\"sku\": \"A-1\", \"qty\": 2, \"price\": 9.99}, {\"sku\": \"B-7\", \"qty\": 1, \"price\": 24.5}], \"note\": \"leave at the door \\u2014 thanks\"}",
  "isBase64Encoded": false
}`)

func TestSearchJSONEqualsSearch(t *testing.T) {
	t.Parallel()
	docs := append([]string{string(apiEvent)}, fuzzEvents...)
	exprs := append([]string{
		"requestContext.requestId", "requestContext.requestTimeEpoch", `headers."x-idem"`, "headers",
		"powertools_json(body).order_id", "powertools_json(body).items[1]", "powertools_json(body).customer",
		"powertools_json(body).note", "powertools_json(body).missing", "missing.deeper", "powertools_json(missing)",
		"powertools_json(requestContext)", "multiValueHeaders.Accept[0]", "multiValueHeaders.Accept[5]",
		"multiValueHeaders.Accept[-1]", "[requestContext.requestId, httpMethod]", "powertools_json(body).items[*].sku",
		"queryStringParameters.page", "isBase64Encoded", "body", "@",
	}, fuzzExpressions...)
	for _, doc := range docs {
		data, err := decodeStd([]byte(doc))
		if err != nil {
			t.Fatalf("test document: %v", err)
		}
		for _, expr := range exprs {
			e := MustCompile(expr)
			want, wantErr := e.Search(data)
			for _, search := range rawSearches(e) {
				got, gotErr := search.fn([]byte(doc))
				if ambiguous(gotErr) {
					continue
				}
				if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
					t.Errorf("%s on %.40q: %s = %#v, %v; Search = %#v, %v", expr, doc, search.name, got, gotErr, want, wantErr)
				}
			}
		}
	}
}

// refused is the want of a search that must be refused as ambiguous.
type refused struct{}

func TestSearchJSONValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		doc  string
		want any
	}{
		{"powertools_json(body).order_id", string(apiEvent), json.Number("12345678901234567890")},
		{`headers."x-idem"`, string(apiEvent), "key-é-1"},
		{"a", `{"a":1,"a":2}`, refused{}},
		{"a.b", `{"a":{"b":1},"a":{"c":2}}`, refused{}},
		{"key", `{"k\u0065y":"v"}`, "v"},
		// Repeated names, also through escapes, and names that fold to the
		// path's name: refused.
		{"Key", `{"key":"v","pad":"0123456789abcdef"}`, refused{}},
		{"key", `{"KEY":"v","key":"w"}`, refused{}},
		{"kind", `{"\u212aind":"v"}`, refused{}},
		{"kind", `{"kind":"v","\u212aind":"w"}`, refused{}},
		{"sku", `{"\u017fku":"v","sku":"w"}`, refused{}},
		{"powertools_json(b).sku", `{"b":"{\"sku\":1,\"SKU\":2}"}`, refused{}},
		{"a", `{"a":{"x":1,"X":2}}`, refused{}},
		{"a", `{"a":[{"x":1,"x":2}]}`, refused{}},
		// Where the expression is evaluated on decoded values: the rest
		// after a path, or a whole decoded document, with a name that is
		// absent in the exact case but present in another.
		{"[a, b]", `{"a":1,"B":2}`, refused{}},
		{"powertools_json(x).[a, b]", `{"x":"{\"a\":1,\"B\":2}"}`, refused{}},
		{"items[*].sku", `{"items":[{"sku":1},{"SKU":2}]}`, refused{}},
		{"items[?qty > `1`].sku", `{"items":[{"sku":1,"QTY":2}]}`, refused{}},
		{"sort_by(items, &sku)[0].sku", `{"items":[{"sku":"b"},{"\u017fku":"a"}]}`, refused{}},
		{"[a, b]", `{"a":1,"c":2}`, []any{json.Number("1"), nil}},
		// Objects that the expression makes: a lookup is refused where
		// a name folds to the field's, with the field's name there too.
		{"merge(`{\"order_id\":\"none\"}`, @).order_id", `{"Order_Id":"B"}`, refused{}},
		{"merge(@, `{\"order_id\":\"none\"}`).order_id", `{"ORDER_ID":"C"}`, refused{}},
		{"merge(`{\"sku\":1}`, @).sku", `{"\u017fku":2}`, refused{}},
		{"merge(`{\"kind\":1}`, @).kind", `{"\u212aind":2}`, refused{}},
		{"merge(`{\"order_id\":\"none\"}`, @).order_id", `{"order":"B"}`, "none"},
		{"merge(`{\"order_id\":\"none\"}`, @).order_id", `{"order_id":"B"}`, "B"},
		{"{a: a, A: b}.a", `{"a":1,"b":2}`, refused{}},
		{"{a: a, A: b}.A", `{"a":1,"b":2}`, refused{}},
		{"{a: a, b: b}.a", `{"a":1,"b":2}`, json.Number("1")},
		{"merge(`{\"k\":1}`, `{\"\\u212a\":2}`).k", `{}`, refused{}},
		{"keys(merge(`{\"x\":1}`, `{\"X\":2}`))", `{}`, []any{"X", "x"}},
		{"merge(`{\"ss\":1}`, @).ss", `{"\u00df":2}`, json.Number("1")},
		// A chain, then a multi-select list of paths: read as paths.
		{"powertools_json(b).[x, y]", `{"b":"null"}`, nil},
		{"powertools_json(b).[x, y]", `{"b":"[1]"}`, []any{nil, nil}},
		{"powertools_json(b).[x, y]", `{"b":"{\"x\":1,\"z\":{\"q\":1,\"Q\":2}}"}`, refused{}},
		{"powertools_json(b).[x, y]", `{"b":"{\"X\":1}"}`, refused{}},
		{"a.[x, y]", `{}`, nil},
		{"a.[x, y]", `{"a":"s"}`, []any{nil, nil}},
		{"a.[x, powertools_json(y).z, [0]]", `{"a":{"y":"{\"z\":2}"}}`, []any{nil, json.Number("2"), nil}},
		{"a.[x, powertools_json(y).z]", `{}`, nil},
		// Folded pairs anywhere, off the path too.
		{"a", `{"a":1,"x":1,"X":2}`, refused{}},
		{"a.b", `{"a":{"b":1},"c":{"x":1,"x":2}}`, refused{}},
		{"a", `{"a":1,"c":"{\"x\":1,\"X\":2}"}`, json.Number("1")},
		// Keys matched on their bytes, through escapes, with text after
		// them so that the word steps run; text that is not Unicode is
		// refused, where it would become U+FFFD.
		{"key", `{"k\u0065y":"v","pad":"0123456789abcdef"}`, "v"},
		{"key", `{"k\u0065y":"v","key":"w","pad":"0123456789abcdef"}`, refused{}},
		{"key", `{"key":"v","k\u0065y":"w","pad":"0123456789abcdef"}`, refused{}},
		{"key", `{"ke":"v","keyy":"w","k\"y":"x","pad":"0123456789abcdef"}`, nil},
		{"order_id", `{"\u006frder_\u0069d":"v","pad":"0123456789abcdef"}`, "v"},
		{`"\u00e9"`, `{"\u00e9":1,"éé":2,"pad":"0123456789abcdef"}`, json.Number("1")},
		{`"\u00e9"`, `{"é":1,"\u00e9x":2,"pad":"0123456789abcdef"}`, json.Number("1")},
		{`"\ufffd"`, "{\"\xff\":1,\"pad\":\"0123456789abcdef\"}", refused{}},
		{`"a\ufffd"`, "{\"a\xff\":1,\"pad\":\"0123456789abcdef\"}", refused{}},
		{"ab", "{\"a\xff\":1,\"pad\":\"0123456789abcdef\"}", refused{}},
		{"s", `{"s":"bad \udc00 surrogate"}`, refused{}},
		{"s", "{\"s\":\"bad \xff byte\"}", refused{}},
		{`"\ufffd"`, "{\"\xef\xbf\xbd\":1,\"pad\":\"0123456789abcdef\"}", json.Number("1")},
		{`"\ufffd"`, `{"\ufffd":"\ud83d\ude00"}`, "\U0001f600"},
		{"powertools_json(a)", `{"a":"\"\\ud800\""}`, refused{}},
		{"a[1]", `{"a":[0,{"x":[]}]}`, map[string]any{"x": []any{}}},
		{"powertools_json(a).b", `{"a":"{\"b\":\"\\\"q\\\"\"}"}`, `"q"`},
		{"a", " {\"a\" : true} \n", true},
		// Skipped objects through skipObject's one-step paths and around
		// them: ": " and ",\n" plus indentation of under and over eight
		// spaces, other whitespace, non-ASCII and escaped text.
		{"a", "{\"x\": {\"k\": \"v\",\n    \"l\": \"\u00e9t\u00e9 \\\"q\\\"\",\n             \"m\":\t[1, {\"n\" :\r\nnull}]\n  },\n  \"a\": 2, \"pad\": \"0123456789abcdef\"}", json.Number("2")},
		{"a", "{\"x\": {\"\xff\xfe\": \"\xc3\xa9\xff\", \"k\": {}}, \"a\": 3, \"pad\": \"0123456789abcdef\"}", refused{}},
		{"a", "{\"x\": {\"\xc3\xa9\": \"\xc3\xa9\", \"k\": {}}, \"a\": 3, \"pad\": \"0123456789abcdef\"}", json.Number("3")},
		// For the lax scanner, which reads backwards: strings ending in
		// escaped backslashes and quotes, brackets inside strings, keys
		// with escaped quotes, scalars of every kind, arrays by index.
		{"a", `{"a":1,"b":"x\\\\","c":"\\\"","d":"\\\\\"\\\\"}`, json.Number("1")},
		{"a", `{"a":"q\"","b":"0123456789abcdef\\"}`, `q"`},
		{"a", `{"a":{"s":"}{][\"]"},"x":{"t":["}",{"u":"{{"}]},"y":[[],{}]}`, map[string]any{"s": `}{]["]`}},
		{"y", `{"a":{"s":"}{][\"]"},"x":{"t":["}",{"u":"{{"}]},"y":[[],{}]}`, []any{[]any{}, map[string]any{}}},
		{`"k\"y"`, `{"k\"y":1,"k\u0022y":2,"pad":"0123456789abcdef"}`, refused{}},
		{`"a\\b"`, `{"a\\b":1,"ab":2,"a\u005cb":3,"a\b":4,"pad":"0123456789abcdef"}`, refused{}},
		{"n", `{"n":-1.5e+3,"t":true,"f":false,"z":null}`, json.Number("-1.5e+3")},
		{"z", `{"n":-1.5e+3,"t":true,"f":false,"z":null}`, nil},
		{"t", "{\"n\":-1.5e+3,\"t\":true\r\n,\"f\":false\t}", true},
		{"a[2].b", `{"a":["],[\"",{"b":0},{"b":[1,"]"]}],"pad":"0123456789abcdef"}`, []any{json.Number("1"), "]"}},
		{"a[3]", `{"a":[1,2,3]}`, nil},
		{"a[0]", `{"a":[]}`, nil},
		{"a", `{}`, nil},
		{"a.b", `{"a":[1]}`, nil},
		{"[1].a", `[{"a":1}, {"a":"0123456789abcdef0123456789"} ]`, "0123456789abcdef0123456789"},
		{"powertools_json(a[0]).b", `{"a":["{\"b\":[\"\\\"\"]}"]}`, []any{`"`}},
		// Projections, Powertools decoders and multi-selects at the
		// root, read as paths.
		{"r[*].powertools_json(b).id", `{"r":[{"b":"{\"id\":1}"},{"b":"{\"x\":1}"},{"b":"{\"id\":\"c\"}"}]}`, []any{json.Number("1"), "c"}},
		{"r[*].d", `{"r":[{"d":"aGk="},{"x":1},{"d":""}]}`, []any{"aGk=", ""}},
		{"r[*].powertools_base64(d)", `{"r":[{"d":"aGk="},{"d":""}]}`, []any{"hi", ""}},
		{"powertools_json(powertools_base64(d)).a", `{"d":"eyJhIjoxfQ=="}`, json.Number("1")},
		{"powertools_json(powertools_base64(d)).A", `{"d":"eyJhIjoxfQ=="}`, refused{}},
		{"r[*][*]", `{"r":[[1],[],{"a":2}]}`, []any{[]any{json.Number("1")}, []any{}}},
		{"r[*].a[*].b", `{"r":[{"a":[{"b":1}]},{"a":{"b":2}},{"x":0}]}`, []any{[]any{json.Number("1")}}},
		{"r[*].a", `{"r":{"a":1}}`, nil},
		{"(r[*].a)[*].b", `{"r":[{"a":[{"b":1},{"b":2}]},{"a":[{"b":3}]}]}`, []any{}},
		{"(r[*].a)[*]", `{"r":[{"a":[{"b":1}]},{"a":[]}]}`, []any{[]any{map[string]any{"b": json.Number("1")}}, []any{}}},
		{"r[*].powertools_json(b)", `{"r":"x"}`, nil},
		{"[customer_id, order_id]", `{"order_id":"o","customer_id":"c","items":[{},{}]}`, []any{"c", "o"}},
		{"{c: customer_id, o: order_id}", `{"order_id":"o","customer_id":"c"}`, map[string]any{"c": "c", "o": "o"}},
		{"[customer_id, order_id]", `{"ORDER_ID":"o","customer_id":"c"}`, refused{}},
		{"[customer_id, order_id]", `null`, nil},
		{"[powertools_json(b).x, c]", `null`, nil},
		{"a.[powertools_json(b).x]", `{"a":null}`, nil},
		{"a.{x: powertools_json(b).x}", `{}`, nil},
		{"a.[powertools_json(b).x, c]", `{"a":{"b":"{\"x\":[1]}","c":true}}`, []any{[]any{json.Number("1")}, true}},
	}
	for _, tt := range tests {
		for _, search := range rawSearches(MustCompile(tt.expr)) {
			t.Run(search.name+" "+tt.expr+" "+tt.doc, func(t *testing.T) {
				got, err := search.fn([]byte(tt.doc))
				if _, ok := tt.want.(refused); ok {
					if !ambiguous(err) {
						t.Errorf("= %#v, %v; want a *strictjson.DuplicateNameError or *strictjson.InvalidTextError", got, err)
					}
					return
				}
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("= %#v, %v; want %#v", got, err, tt.want)
				}
			})
		}
	}
}

// rawSearches are the searches of raw JSON, which must agree with Search
// on valid, unambiguous documents.
func rawSearches(e *Expression) []struct {
	name string
	fn   func([]byte) (any, error)
} {
	return []struct {
		name string
		fn   func([]byte) (any, error)
	}{{"SearchJSON", e.SearchJSON}}
}

func mustDecode(raw []byte) any {
	v, err := decodeStd(raw)
	if err != nil {
		panic(err)
	}
	return v
}

func TestSearchJSONInvalid(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		``, `{`, `{"a":1} x`, `{"a":1,}`, `{"a":01}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `[1 2]`, `{"a" 1}`,
		`{"a":1}{}`, `nul`, `{"a":[}`, `{"b":1, "a":tru}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		// Invalid text right where skipObject's one-step checks look: a
		// control byte in a key or value, a key without its colon, a
		// missing comma before the next key.
		"{\"x\": {\"k\x01\": \"v\",\n    \"l\": 1}, \"a\": 1, \"pad\": \"0123456789abcdef\"}",
		"{\"x\": {\"k\": \"v\x01\",\n    \"l\": 1}, \"a\": 1, \"pad\": \"0123456789abcdef\"}",
		"{\"x\": {\"k\" \"v\",\n    \"l\": 1}, \"a\": 1, \"pad\": \"0123456789abcdef\"}",
		"{\"x\": {\"k\": \"v\"\n    \"l\": 1}, \"a\": 1, \"pad\": \"0123456789abcdef\"}",
		"{\"x\": {\"k\": \"v\",\n    1: 1}, \"a\": 1, \"pad\": \"0123456789abcdef\"}",
	} {
		for _, expr := range []string{"a", "a.b", "powertools_json(a)", "length(@)", "[0]"} {
			got, err := MustCompile(expr).SearchJSON([]byte(doc))
			var ve *InvalidValueError
			var se *strictjson.SyntaxError
			if !errors.As(err, &ve) || !errors.As(err, &se) {
				t.Errorf("%s on %.30q = %#v, %v; want *InvalidValueError wrapping *strictjson.SyntaxError", expr, doc, got, err)
			}
		}
	}
}

// A document nested to encoding/json's limit is still accepted.
func TestSearchJSONDeepDocument(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat(`{"a":`, 9998) + "1" + strings.Repeat("}", 9998)
	got, err := MustCompile("a.a.a").SearchJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(map[string]any); !ok {
		t.Errorf("got %T", got)
	}
}

// TestSearchKeepsCaseVariants checks that Search, on data the caller
// decoded, reads names exactly as the specification says: only SearchJSON,
// which stands for a struct decoding of the same text, refuses variants.
func TestSearchKeepsCaseVariants(t *testing.T) {
	t.Parallel()
	got, err := MustCompile("[a, b]").Search(map[string]any{"a": 1.0, "B": 2.0})
	if err != nil || !reflect.DeepEqual(got, []any{1.0, nil}) {
		t.Errorf("Search = %#v, %v; want [1, null]", got, err)
	}
	got, err = MustCompile("merge(`{\"order_id\":\"none\"}`, @).order_id").Search(map[string]any{"Order_Id": "B"})
	if err != nil || got != "none" {
		t.Errorf("Search = %#v, %v; want none", got, err)
	}
}

// TestPlans lists which expressions SearchJSON follows in the raw bytes,
// decoding only what they name, and which it evaluates on the whole
// document decoded.
func TestPlans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr    string
		planned bool
	}{
		{"requestContext.requestId", true},
		{"powertools_json(body).order_id", true},
		{"powertools_json(body).[amount, currency]", true},
		{"powertools_json(powertools_base64_gzip(Records[0].kinesis.data)).order_id", true},
		{"Records[*].powertools_json(powertools_base64_gzip(kinesis.data)).order_id", true},
		{"Records[*].messageId", true},
		{"a[*].b[*].c", true},
		{"[customer_id, order_id]", true},
		{"{c: customer_id, o: order_id}", true},
		{"[requestContext.requestId, powertools_json(body).order_id]", true},
		{"a.b | c", false},
		{"@", false},
		{"(a[*].b)[0]", true}, // the index applies to the list, after the path
		{"(a[*].b)[*].c", false},
		{"a[*].[b, c]", false},
		{"powertools_json(a[*].b)", false},
		{"[a, length(b)]", false},
		{"merge(@, `{}`).a", false},
	} {
		e := MustCompile(tc.expr)
		if planned := e.plan != nil; planned != tc.planned {
			t.Errorf("%s: planned %v, want %v", tc.expr, planned, tc.planned)
		}
		if tc.expr == "(a[*].b)[0]" && (len(e.plan.rest) != 1 || len(e.plan.paths) != 1) {
			t.Errorf("%s: the index is not evaluated on the projection's list", tc.expr)
		}
	}
}

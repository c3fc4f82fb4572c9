package jmespath

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A JSON document quoted in a string, the way unescapeRun's two-escape step
// (\":\" and \",\") and appendString's copy of a string's last bytes see
// it: at every offset in a word, cut short anywhere, and with the bytes
// around the separators changed to ones the step must not take.
func TestAppendStringQuotedDocument(t *testing.T) {
	docs := []string{
		string(compactBody[1:]),
		`{\"a\":\"b\",\"c\":\"d\"}"`,
		`\":\"\",\"\":\"\"`,
		`\":\"\":\"\",\",\"`,
		`x\";\"y\"\"z\",,\"`,
		`\":\\\",\"\\\":\"\\"`,
		`\":\n\",\t\"`,
		`\":\u0022\"\u003a\"`,
		`\"` + "\x00" + `\"\":` + "\x1f" + `\"`,
		`\":\"é\",\"` + "\xff" + `\"`,
		`\":\"\",\` + `"`,
		`\":\x\",\"`,
	}
	for _, doc := range docs {
		for pad := 0; pad < 12; pad++ {
			s := strings.Repeat("p", pad) + doc
			for end := 0; end <= len(s); end++ {
				// The string ends its buffer, as a body does for
				// SearchValidJSON, or is followed by more bytes.
				checkScanners(t, []byte(s[:end]))
				checkScanners(t, []byte(s[:end]+`"}`+strings.Repeat(" ", 16)))
			}
		}
	}
}

// A string decoded into a buffer with little spare capacity grows it, at
// any length.
func TestAppendStringGrows(t *testing.T) {
	for n := 0; n < 100; n++ {
		b := []byte(strings.Repeat(`ab\":\"`, n) + `"`)
		want := strings.Repeat(`ab":"`, n)
		for spare := 0; spare < 20; spare++ {
			got, end := appendString(make([]byte, 1, 1+spare), b, 0)
			if end != len(b) || string(got[1:]) != want {
				t.Fatalf("appendString(%q) with %d spare bytes = %q, %d; want %q, %d", b, spare, got[1:], end, want, len(b))
			}
		}
	}
}

// checkQuoted checks findQuoted on the string whose contents start at
// q[1] against decoding the string and scanning the document in it, the
// path it stands in for: where it answers, the answer and the end must be
// theirs. It reports whether it answered.
func checkQuoted(t *testing.T, q []byte, expr string) bool {
	t.Helper()
	e, err := Compile(expr)
	if err != nil || e.path == nil {
		return false
	}
	v, end, ok := findQuoted(q, 1, e.path)
	if !ok {
		return false
	}
	text, wantEnd := appendString(nil, q, 1)
	if wantEnd < 0 {
		t.Fatalf("findQuoted(%q, %s) = %#v, %d; the string is invalid", q, expr, v, end)
	}
	want, wantOK := scanDoc(text, e.path)
	if !wantOK || end != wantEnd || !reflect.DeepEqual(v, want) {
		t.Fatalf("findQuoted(%q, %s) = %#v, %d; decoded and scanned: %#v, %v, %d", q, expr, v, end, want, wantOK, wantEnd)
	}
	return true
}

// quoteMinimal quotes doc as a JSON string escaping only what must be:
// quotes, backslashes and control bytes. It is how API Gateway quotes a
// body, and the form the quoted scan takes.
func quoteMinimal(doc string) []byte {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c < ' ':
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return []byte(b.String())
}

var quotedExprs = []string{"k", "k.k", "k[1]", "a", "missing", "b[1].k", "[0]", "[1].k", "@", "k.missing.deeper", "powertools_json(k)"}

// The quoted scan answers for documents in its form, as the decoding
// does, and gives up on the others; cut short anywhere, the documents
// must still give the decoding's answer or none.
func TestFindQuoted(t *testing.T) {
	docs := []string{
		string(compactBody[1 : len(compactBody)-1]),
		`{"a":1,"k":"v","b":[1,{"k":2}],"c":{"k":3},"d":true,"e":null,"f":-1.5e3}`,
		`{"k":1,"k":"two"}`, `{"k":{"k":1},"x":2,"k":{"k":[3,4]}}`,
		`{"\u006b":"escaped key","kk":1,"k\"":2}`, `{"k":"a\"b\\c\/d\n\u00e9"}`,
		`{"k":"é ü","a":"\ud83d\ude00","b":"\ud83d"}`, `{ "k" : [ 0 , 1 ] , "a" : { } }`,
		`[{"k":1},{"k":[1,2]}]`, `"just a string"`, `12.5e3`, `true`, `null`, `{}`, `[]`,
		"{\"k\":\"\xff\xfe\"}", `{"k":1}  `, `{"a":[1,2,],"k":1}`, `{"k":tru}`, `{"k":01}`, `{"k":1}}`,
		`{"k":"\x"}`, "{\n  \"k\": 1\n}", `{"k":"\u12"}`, `{"k":1,}`, `{"k" 1}`, `{"k":"a"b"}`,
		`{"k":"{\"k\":1}"}`,
	}
	answered := 0
	for _, doc := range docs {
		for _, q := range [][]byte{quoteMinimal(doc), mustMarshal(t, doc)} {
			for end := 0; end <= len(q); end++ {
				for _, expr := range quotedExprs {
					if checkQuoted(t, q[:end], expr) && end == len(q) {
						answered++
					}
				}
			}
		}
	}
	// The compact documents of the simple form, at least.
	if answered < 100 {
		t.Errorf("the quoted scan answered %d times; want it to take the simple form", answered)
	}
	for _, expr := range []string{"order_id", "items[1].sku", "amount"} {
		if !checkQuoted(t, compactBody, expr) {
			t.Errorf("the quoted scan gave up on %s in %s", expr, compactBody)
		}
	}
}

func mustMarshal(t *testing.T, s string) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzFindQuoted(f *testing.F) {
	f.Add(string(compactBody[1:len(compactBody)-1]), "order_id")
	f.Add(`{"k":"a\"b","a":[1,{"k":"\u00e9"}]}`, "a[1].k")
	f.Add(`[{"k":1},{"k":[1,2]}]`, "[1].k[0]")
	f.Fuzz(func(t *testing.T, doc, expr string) {
		checkQuoted(t, quoteMinimal(doc), expr)
		checkQuoted(t, []byte(`"`+doc+`"`), expr)
	})
}

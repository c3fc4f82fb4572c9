package jmespath

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// checkAgreement checks SearchJSON against Search on the document that
// encoding/json decodes with UseNumber: where Search refuses, SearchJSON
// refuses; where SearchJSON answers, Search gives the same answer. Alone,
// SearchJSON may refuse only on grounds Search cannot see, text that
// encoding/json reads two ways (names merged or matched to a variant,
// text that becomes U+FFFD): with that refusal, or with another met
// first in such a document.
//
// The two count their budgets differently, SearchJSON the values it
// decodes and Search only what its functions and projections make: where
// either refuses for its budget alone, both must agree without one.
func checkAgreement(t *testing.T, e *Expression, doc []byte) {
	t.Helper()
	got, gotErr := e.SearchJSON(doc)
	checkErrorType(t, gotErr)
	data, refErr := decodeStd(doc)
	if refErr != nil {
		if gotErr == nil {
			t.Fatalf("SearchJSON(%q) on invalid JSON %q = %#v, want an error (%v)", e, doc, got, refErr)
		}
		return
	}
	want, wantErr := e.Search(data)
	checkErrorType(t, wantErr)
	if overBudget(gotErr) || overBudget(wantErr) {
		if e.strict.decodeLimit < unlimited {
			checkAgreement(t, withLimit(e, unlimited), doc)
		}
		return
	}
	switch {
	case gotErr == nil && wantErr != nil:
		t.Fatalf("%q on %q: SearchJSON = %#v, Search refuses: %v", e, doc, got, wantErr)
	case gotErr == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q on %q: SearchJSON = %#v, Search = %#v", e, doc, got, want)
	case gotErr != nil && wantErr == nil && !ambiguous(gotErr) && !ambiguousDocument(doc):
		t.Fatalf("%q on %q: SearchJSON refuses (%v), Search = %#v", e, doc, gotErr, want)
	}
}

// unlimited is a decode limit that no test reaches.
const unlimited = 1 << 40

// overBudget reports whether err is a refusal of a search past its
// budget.
func overBudget(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// withLimit returns e with a decode limit of n.
func withLimit(e *Expression, n int) *Expression {
	c := *e
	c.tree.decodeLimit, c.strict.decodeLimit = n, n
	return &c
}

// ambiguousDocument reports whether doc holds names or text that
// encoding/json reads two ways, as internal/strictjson, tested against
// encoding/json there, finds them.
func ambiguousDocument(doc []byte) bool {
	_, err := strictjson.Decode(doc, nil)
	return ambiguous(err)
}

// TestSearchJSONAgrees runs checkAgreement on documents that are at fault
// only off the path (names that fold together, a lone surrogate), which a
// search reading the path alone would answer, and checks that both
// searches refuse them.
func TestSearchJSONAgrees(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ expr, doc string }{
		// Names that fold together off the path, in a document that
		// powertools_json decodes whole for Search.
		{"powertools_json(body).amount", `{"body":"{\"amount\":1,\"note\":\"x\",\"NOTE\":\"y\"}"}`},
		{"powertools_json(body).[amount, currency]", `{"body":"{\"amount\":1,\"currency\":\"EUR\",\"c\":{\"k\":1,\"\\u212a\":2}}"}`},
		// A lone surrogate off the path, likewise.
		{"powertools_json(body).amount", `{"body":"{\"amount\":1,\"note\":\"\\ud800\"}"}`},
	} {
		t.Run(tc.expr+" "+tc.doc, func(t *testing.T) {
			e := MustCompile(tc.expr)
			checkAgreement(t, e, []byte(tc.doc))
			if _, err := e.SearchJSON([]byte(tc.doc)); err == nil {
				t.Errorf("SearchJSON answers")
			}
			if _, err := e.Search(mustDecode([]byte(tc.doc))); err == nil {
				t.Errorf("Search answers")
			}
		})
	}
}

// FuzzSearchAgree checks SearchJSON against Search (checkAgreement) on
// documents and expressions built from the fuzzer's bytes by agreeGen:
// names that fold to one another, text that is not Unicode, documents
// held in strings, in base64 and in gzip, read by chains of fields,
// indexes, projections and Powertools calls, merge, multi-select lists
// and hashes, under a small decode limit at times.
func FuzzSearchAgree(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 64 {
		seed := make([]byte, 48)
		for i := range seed {
			seed[i] = byte(rng.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The document from the first half, the expression from the
		// second, so that both get choices.
		g := agreeGen{b: data[:len(data)/2]}
		var doc bytes.Buffer
		g.document(&doc)
		g.b = data[len(data)/2:]
		expr := g.expr(0)
		var opts []Option
		if g.pick(4) == 0 {
			opts = append(opts, WithDecodeLimit(1+g.pick(64)*g.pick(64)))
		}
		e, err := Compile(expr, opts...)
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		checkAgreement(t, e, doc.Bytes())
	})
}

// agreeGen builds documents and expressions from bytes, one choice a
// byte, choosing the first option once they run out.
type agreeGen struct{ b []byte }

// agreeNames are the member names of the documents and the fields of the
// expressions: case variants, the long s and the Kelvin sign, which fold
// to s and k, and the sharp s, which folds to no pair of letters.
var agreeNames = []string{"a", "A", "sku", "\u017fku", "k", "\u212a", "ss", "\u00df"}

// agreeStrings are string values, as JSON text: among them a lone
// surrogate, a byte that is not UTF-8 and U+FFFD itself.
var agreeStrings = []string{`""`, `"v"`, `"\u00e9"`, `"\ud800"`, "\"\xff\"", `"\ufffd"`, `"\ud83d\ude00"`, `"{\"a\":1}"`}

func (g *agreeGen) pick(n int) int {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return int(c) % n
}

// document writes a JSON document to w: mostly an object, as events are.
func (g *agreeGen) document(w *bytes.Buffer) {
	if g.pick(4) == 0 {
		g.value(w, 0)
		return
	}
	g.object(w, 0)
}

// value writes a JSON value to w.
func (g *agreeGen) value(w *bytes.Buffer, depth int) {
	k := g.pick(14)
	if depth >= 3 {
		k %= 6
	}
	switch k {
	case 0:
		w.WriteString("1")
	case 1:
		w.WriteString("-0.5e1")
	case 2:
		w.WriteString("null")
	case 3:
		w.WriteString("true")
	case 4:
		w.WriteString(agreeStrings[g.pick(len(agreeStrings))])
	case 5:
		w.WriteString("12345678901234567890")
	case 6, 7, 8:
		g.object(w, depth)
	case 9:
		w.WriteByte('[')
		for i := range g.pick(4) {
			if i > 0 {
				w.WriteByte(',')
			}
			g.value(w, depth+1)
		}
		w.WriteByte(']')
	default: // a document held in a string, as JSON, base64 or gzip
		var inner bytes.Buffer
		g.value(&inner, depth+1)
		text := inner.Bytes()
		switch k {
		case 12:
			text = []byte(base64.StdEncoding.EncodeToString(text))
		case 13:
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(text)
			zw.Close()
			text = []byte(base64.StdEncoding.EncodeToString(z.Bytes()))
		}
		writeQuoted(w, text)
	}
}

// object writes a JSON object to w.
func (g *agreeGen) object(w *bytes.Buffer, depth int) {
	w.WriteByte('{')
	for i := range g.pick(5) {
		if i > 0 {
			w.WriteByte(',')
		}
		g.name(w)
		w.WriteByte(':')
		g.value(w, depth+1)
	}
	w.WriteByte('}')
}

// name writes a member name, at times with every rune escaped.
func (g *agreeGen) name(w *bytes.Buffer) {
	name := agreeNames[g.pick(len(agreeNames))]
	if g.pick(4) != 0 {
		writeQuoted(w, []byte(name))
		return
	}
	w.WriteByte('"')
	for _, r := range name {
		fmt.Fprintf(w, `\u%04x`, r)
	}
	w.WriteByte('"')
}

// writeQuoted writes text as a JSON string, its bytes as they are but for
// those JSON must escape.
func writeQuoted(w *bytes.Buffer, text []byte) {
	w.WriteByte('"')
	for _, c := range text {
		switch {
		case c == '"' || c == '\\':
			w.WriteByte('\\')
			w.WriteByte(c)
		case c < ' ':
			fmt.Fprintf(w, `\u%04x`, c)
		default:
			w.WriteByte(c)
		}
	}
	w.WriteByte('"')
}

// expr returns an expression: mostly a chain of fields, indexes and
// powertools_json calls, as keys are, which SearchJSON follows in the
// raw bytes; else one that it evaluates on decoded values.
func (g *agreeGen) expr(depth int) string {
	k := g.pick(16)
	if depth >= 2 {
		k = 0
	}
	switch k {
	case 0, 1, 2, 3, 4, 5:
		return g.chain()
	case 6:
		return g.chain() + ".[" + g.field() + ", " + g.field() + "]"
	case 7:
		return g.chain() + ".{" + g.field() + ": " + g.field() + "}"
	case 8:
		name, _ := json.Marshal(agreeNames[g.pick(len(agreeNames))])
		lit := "`{" + string(name) + `:"none"}` + "`"
		if g.pick(2) == 0 {
			return "merge(" + lit + ", " + g.expr(depth+1) + ")." + g.field()
		}
		return "merge(" + g.expr(depth+1) + ", " + lit + ")." + g.field()
	case 9:
		if g.pick(2) == 0 {
			return "{" + g.field() + ": " + g.expr(depth+1) + ", " + g.field() + ": " + g.expr(depth+1) + "}"
		}
		return "[" + g.expr(depth+1) + ", " + g.expr(depth+1) + "]"
	case 10:
		return "{" + g.field() + ": " + g.expr(depth+1) + ", " + g.field() + ": " + g.expr(depth+1) + "}." + g.field()
	case 11:
		return g.expr(depth+1) + " | " + g.expr(depth+1)
	case 12:
		if g.pick(2) == 0 {
			return "(" + g.chain() + ")[*]." + g.field()
		}
		return g.chain() + "[*]." + g.field()
	case 13:
		return "powertools_base64(" + g.chain() + ")"
	case 14:
		return "powertools_base64_gzip(" + g.chain() + ")"
	}
	return "powertools_json(powertools_base64(" + g.chain() + "))." + g.field()
}

// chain returns a field followed by up to three steps: fields, indexes,
// list projections and Powertools calls.
func (g *agreeGen) chain() string {
	c := g.field()
	for range g.pick(4) {
		switch g.pick(12) {
		case 0, 1, 2, 3:
			c += "." + g.field()
		case 4, 5:
			c = "powertools_json(" + c + ")"
		case 6:
			c = "powertools_base64(" + c + ")"
		case 7:
			c = "powertools_base64_gzip(" + c + ")"
		case 8:
			c += "[*]"
		case 9:
			c += "[*].powertools_json(@)"
		default:
			c += fmt.Sprintf("[%d]", g.pick(3)-1)
		}
	}
	return c
}

// field returns a field of agreeNames, quoted where it is not an
// identifier.
func (g *agreeGen) field() string {
	name := agreeNames[g.pick(len(agreeNames))]
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			q, _ := json.Marshal(name)
			return string(q)
		}
	}
	return name
}

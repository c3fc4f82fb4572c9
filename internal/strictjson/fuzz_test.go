package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzDecode checks Decode against encoding/json: it accepts only what
// json.Valid accepts, decodes it as json.Decoder with UseNumber does, and
// refuses exactly the texts with an object whose names bytes.EqualFold
// holds equal, as encoding/json's token stream reads them, or with a
// string whose raw text is not UTF-8 or holds a lone surrogate.
func FuzzDecode(f *testing.F) {
	for _, tc := range grammarTests {
		f.Add([]byte(tc.doc))
	}
	for _, tc := range duplicateTests {
		f.Add([]byte(tc.doc))
	}
	for _, tc := range textTests {
		f.Add([]byte(tc.doc))
	}
	for _, tc := range findTests {
		f.Add([]byte(tc.doc))
	}
	for _, ev := range loadEvents(f) {
		f.Add(ev.text)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		got, err := Decode(data, nil)
		var se *SyntaxError
		var de *DuplicateNameError
		var te *InvalidTextError
		switch {
		case err == nil:
			if !valid {
				t.Fatalf("Decode(%q) = %#v, json.Valid refuses it", data, got)
			}
			want, err := decodeStd(data)
			if err != nil {
				t.Fatalf("Decode(%q) = %#v, encoding/json: %v", data, got, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(%q) = %#v, encoding/json gives %#v", data, got, want)
			}
			if hasFoldPair(data) {
				t.Fatalf("Decode(%q) accepts names that fold together", data)
			}
			if hasBadText(data) {
				t.Fatalf("Decode(%q) accepts text that is not Unicode", data)
			}
		case errors.As(err, &se):
			if se.Quoted || se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("Decode(%q): SyntaxError %+v", data, *se)
			}
			if valid && nesting(data) <= maxDepth {
				t.Fatalf("Decode(%q): %v, json.Valid accepts it", data, err)
			}
		case !valid:
			t.Fatalf("Decode(%q): %v, json.Valid refuses it", data, err)
		case errors.As(err, &de):
			if found, _ := foldPairs(newDecoder(data)); !found {
				t.Fatalf("Decode(%q): %v, encoding/json's tokens show no names that fold together", data, err)
			}
			if de.Quoted || de.Variant != "" || !bytes.EqualFold([]byte(de.Name), []byte(de.Other)) {
				t.Fatalf("Decode(%q): DuplicateNameError %+v", data, *de)
			}
		case errors.As(err, &te):
			if !hasBadText(data) {
				t.Fatalf("Decode(%q): %v, the raw strings are Unicode", data, err)
			}
			if te.Quoted || te.Offset < 0 || te.Offset >= len(data) {
				t.Fatalf("Decode(%q): InvalidTextError %+v", data, *te)
			}
		default:
			t.Fatalf("Decode(%q): error %T %v", data, err, err)
		}
	})
}

// FuzzFind checks Find against encoding/json. path is parsed by
// parsePath. On a text it accepts, Find's result is what the path selects
// in the map that json.Decoder with UseNumber decodes, and what a chain
// of structs with one field named by each step reads; every refusal has
// its grounds in encoding/json's token stream, and without grounds Find
// accepts. Within a budget of limit bytes (none for 0), Find gives the
// same answer or refuses with a *LimitError.
func FuzzFind(f *testing.F) {
	for _, tc := range findTests {
		if p, ok := formatPath(tc.path); ok {
			f.Add([]byte(tc.doc), p, uint16(tc.budget))
		}
	}
	for _, tc := range duplicateTests {
		f.Add([]byte(tc.doc), "", uint16(0))
	}
	for _, ev := range loadEvents(f) {
		for i, p := range ev.paths {
			f.Add(ev.text, p, uint16(i*37))
			if i%8 == 7 {
				// Mostly a case variant of a name on the path.
				f.Add(ev.text, strings.ToUpper(p), uint16(0))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, p string, limit uint16) {
		steps := parsePath(p)
		if len(steps) > 32 {
			return // a longer path adds time, not cases
		}
		got, err := Find(data, nil, steps)
		valid := json.Valid(data)
		var facts pathFacts
		walkErr := facts.read(data, steps)
		checkBudget(t, data, p, steps, int(limit), got, err)
		var se *SyntaxError
		if errors.As(err, &se) && !se.Quoted {
			if valid && nesting(data) <= maxDepth {
				t.Fatalf("Find(%q, %q): %v, json.Valid accepts the text", data, p, err)
			}
			return
		}
		if err != nil && se == nil && !valid {
			t.Fatalf("Find(%q, %q): %v, want a *SyntaxError: json.Valid refuses the text", data, p, err)
		}
		var de *DuplicateNameError
		var te *TypeError
		var xe *InvalidTextError
		switch {
		case err == nil:
			if !valid || walkErr != nil {
				t.Fatalf("Find(%q, %q) = %#v, json.Valid refuses the text", data, p, got)
			}
			if facts.pair || facts.quotedPair || facts.badText || facts.quotedBadText || facts.badDoc || len(facts.typeGot) > 0 {
				t.Fatalf("Find(%q, %q) = %#v, should refuse: %+v", data, p, got, facts)
			}
			checkViews(t, data, p, steps, got)
		case errors.As(err, &se):
			if !facts.badDoc {
				t.Fatalf("Find(%q, %q): %v, no string on the path holds invalid JSON", data, p, err)
			}
		case errors.As(err, &de):
			if found := facts.pair && !de.Quoted || facts.quotedPair && de.Quoted; !found {
				t.Fatalf("Find(%q, %q): %v, encoding/json's tokens show no names that fold together: %+v", data, p, err, facts)
			}
		case errors.As(err, &xe):
			if found := facts.badText && !xe.Quoted || facts.quotedBadText && xe.Quoted; !found {
				t.Fatalf("Find(%q, %q): %v, the raw strings are Unicode: %+v", data, p, err, facts)
			}
		case errors.As(err, &te):
			if !slices.Contains(facts.typeGot, te.Got) {
				t.Fatalf("Find(%q, %q): %v, the path meets %q at Document steps", data, p, err, facts.typeGot)
			}
			// Invalid text comes first, as the package documents.
			if facts.badDoc || facts.pair || facts.quotedPair || facts.badText || facts.quotedBadText {
				t.Fatalf("Find(%q, %q): %v on text it refuses: %+v", data, p, err, facts)
			}
		default:
			t.Fatalf("Find(%q, %q): error %T %v", data, p, err, err)
		}
	})
}

// checkBudget checks Find within a budget of limit bytes against its
// answer without one, got and err: the same answer, having spent no more
// than the limit, or a *LimitError.
func checkBudget(t *testing.T, data []byte, p string, steps []Step, limit int, got any, err error) {
	if limit == 0 {
		return
	}
	b := &Budget{Limit: limit}
	bgot, berr := Find(data, b, steps)
	var le *LimitError
	switch {
	case errors.As(berr, &le):
		if le.Limit != limit || le.Len <= limit {
			t.Fatalf("Find(%q, %q) within %d: LimitError %+v", data, p, limit, *le)
		}
		return
	case (berr == nil) != (err == nil) || berr != nil && berr.Error() != err.Error():
		t.Fatalf("Find(%q, %q) within %d: %v; without a budget: %v", data, p, limit, berr, err)
	case !reflect.DeepEqual(bgot, got):
		t.Fatalf("Find(%q, %q) within %d = %#v; without a budget %#v", data, p, limit, bgot, got)
	case b.spent > limit:
		t.Fatalf("Find(%q, %q) spent %d of a budget of %d", data, p, b.spent, limit)
	}
}

// FuzzFindAll checks FindAll against Find: paths, split on '|', are
// parsed by parsePath. FindAll fails if any path fails, with the error
// that path gives alone, in a *PathError naming it when the text alone
// is not at fault, when every path gives it; otherwise result i is Find's
// for path i.
func FuzzFindAll(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1,"c":"{\"d\":[2]}"},"e":[3]}`), "a.b|a.c.#.d.0|e.0|a|a.c.#")
	f.Add([]byte(`{"a":{"b":1,"B":2},"c":"x"}`), "c|a")
	f.Add([]byte(`{"a":1,"b":"{"}`), "a.#|b.#")
	for _, ev := range loadEvents(f) {
		f.Add(ev.text, strings.Join(ev.paths, "|"))
	}
	f.Fuzz(func(t *testing.T, data []byte, ps string) {
		var paths [][]Step
		for p := range strings.SplitSeq(ps, "|") {
			paths = append(paths, parsePath(p))
		}
		if len(paths) > 8 {
			return
		}
		got, err := FindAll(data, nil, paths...)
		var errs []error
		for i, p := range paths {
			v, err := Find(data, nil, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if got != nil && !reflect.DeepEqual(got[i], v) {
				t.Fatalf("FindAll(%q, %q)[%d] = %#v, Find gives %#v", data, ps, i, got[i], v)
			}
		}
		if (err == nil) != (len(errs) == 0) {
			t.Fatalf("FindAll(%q, %q): %v; Find: %v", data, ps, err, errs)
		}
		if err == nil {
			return
		}
		pe, named := err.(*PathError)
		if !named {
			if len(errs) != len(paths) || !reflect.DeepEqual(errs[0], err) {
				t.Fatalf("FindAll(%q, %q): %v, of the text; Find: %v", data, ps, err, errs)
			}
			return
		}
		if pe.Path < 0 || pe.Path >= len(paths) {
			t.Fatalf("FindAll(%q, %q): path %d", data, ps, pe.Path)
		}
		if _, alone := Find(data, nil, paths[pe.Path]); !reflect.DeepEqual(alone, pe.Err) {
			t.Fatalf("FindAll(%q, %q): %v, of path %d; Find of that path: %v", data, ps, pe.Err, pe.Path, alone)
		}
	})
}

// checkViews checks Find's result, got, against the map and the struct
// views of data.
func checkViews(t *testing.T, data []byte, p string, steps []Step, got any) {
	v, err := decodeStd(data)
	if err == nil {
		v, err = mapView(v, steps)
	}
	if err != nil {
		t.Fatalf("Find(%q, %q) = %#v, on the map view: %v", data, p, got, err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("Find(%q, %q) = %#v, the map view gives %#v", data, p, got, v)
	}
	raw, ok, err := structView(data, steps)
	if err != nil {
		t.Fatalf("Find(%q, %q) = %#v, on the struct view: %v", data, p, got, err)
	}
	if !ok {
		return
	}
	if raw == nil || string(raw) == "null" {
		if got != nil {
			t.Fatalf("Find(%q, %q) = %#v, the struct view gives %s", data, p, got, raw)
		}
		return
	}
	if v, err = decodeStd(raw); err != nil || !reflect.DeepEqual(got, v) {
		t.Fatalf("Find(%q, %q) = %#v, the struct view gives %s", data, p, got, raw)
	}
}

// event is a Lambda event from the jmespath package's test data, with
// paths into it.
type event struct {
	text  []byte
	paths []string
}

// loadEvents reads the jmespath package's events and lists the paths
// that exist in each, Document steps included, up to a bound.
func loadEvents(f *testing.F) []event {
	files, err := filepath.Glob("../../jmespath/testdata/events/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no events: %v", err)
	}
	var events []event
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		v, err := decodeStd(text)
		if err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		ev := event{text: text}
		eventPaths(v, nil, &ev.paths)
		events = append(events, ev)
	}
	return events
}

// eventPaths appends to paths the paths in v that formatPath can write,
// in a fixed order, up to 48.
func eventPaths(v any, prefix []Step, paths *[]string) {
	if len(*paths) >= 48 {
		return
	}
	if p, ok := formatPath(prefix); ok {
		*paths = append(*paths, p)
	}
	at := func(st Step) []Step { return append(slices.Clip(prefix), st) }
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			eventPaths(v[k], at(Step{Kind: Member, Name: k}), paths)
		}
	case []any:
		for i, e := range v[:min(len(v), 2)] {
			eventPaths(e, at(Step{Kind: Index, Index: i}), paths)
		}
	case string:
		if inner, err := decodeStd([]byte(v)); err == nil {
			switch inner.(type) {
			case map[string]any, []any:
				eventPaths(inner, at(Step{Kind: Document}), paths)
			}
		}
	}
}

// parsePath reads a path written as steps joined by '.': "#" for a
// Document step, "*" for an Each step, "~" for a Transform step that
// leaves its text as it is, up to four ASCII digits for an Index step,
// anything else for a Member step. The empty text is the empty path.
func parsePath(s string) []Step {
	if s == "" {
		return nil
	}
	var steps []Step
	for seg := range strings.SplitSeq(s, ".") {
		switch {
		case seg == "#":
			steps = append(steps, Step{Kind: Document})
		case seg == "*":
			steps = append(steps, Step{Kind: Each})
		case seg == "~":
			steps = append(steps, same)
		case isIndex(seg):
			i, _ := strconv.Atoi(seg)
			steps = append(steps, Step{Kind: Index, Index: i})
		default:
			steps = append(steps, Step{Kind: Member, Name: seg})
		}
	}
	return steps
}

// same is the Transform step "~" of parsePath: a copy of the text.
var same = Step{Kind: Transform, Name: "same", Transform: func(text []byte, b Budget) ([]byte, Budget, error) {
	err := b.Spend(len(text))
	return bytes.Clone(text), b, err
}}

// formatPath writes path as parsePath reads it, if it can.
func formatPath(path []Step) (string, bool) {
	segs := make([]string, len(path))
	for i, st := range path {
		switch st.Kind {
		case Document:
			segs[i] = "#"
		case Each:
			segs[i] = "*"
		case Transform:
			segs[i] = "~"
		case Index:
			segs[i] = strconv.Itoa(st.Index)
			if !isIndex(segs[i]) {
				return "", false
			}
		case Member:
			if st.Name == "#" || st.Name == "*" || st.Name == "~" || isIndex(st.Name) || strings.Contains(st.Name, ".") {
				return "", false
			}
			segs[i] = st.Name
		}
	}
	s := strings.Join(segs, ".")
	return s, len(path) == 0 || s != ""
}

func isIndex(seg string) bool {
	if len(seg) == 0 || len(seg) > 4 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

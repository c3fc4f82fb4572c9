package jmespath

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/exprpath"
)

// TestReads checks where expressions read, as the idempotency middleware
// sees it: each place read whole and its slot in the result, and the steps
// taken into values that functions, operators and multi-selects made.
func TestReads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr          string
		reads, derive []string
	}{
		{"@", []string{"@ whole"}, nil},
		{"a.b[2]", []string{"a.b[2] whole"}, nil},
		{"powertools_json(body).order_id", []string{"body.<doc>.order_id whole"}, nil},
		{"powertools_json(body).[amount, currency]", []string{"body.<doc>.amount [0]", "body.<doc>.currency [1]"}, nil},
		{"{a: a, b: b.c}", []string{"a {a}", "b.c {b}"}, nil},
		{"a | [b, c]", []string{"a.b [0]", "a.c [1]"}, nil},
		{"Records[*].s3.object.key", []string{"Records[*].s3.object.key inside"}, nil},
		{"Records[].id", []string{"Records[*][].id inside"}, nil},
		{"Records[1:].id", []string{"Records[*].id inside"}, nil},
		{"a[-1].b", []string{"a[*].b whole"}, nil},
		{"m.*.x", []string{"m.*.x inside"}, nil},
		{"a[?b == `1`].c", []string{"a[*].b inside", "a[*].c inside"}, nil},
		{"a || b", []string{"a inside", "b inside"}, nil},
		{"length(a.b)", []string{"a.b inside"}, nil},
		{"sort_by(a, &t)[0].x", []string{"a inside", "a[*].t inside"}, []string{"a: [0].x"}},
		{"not_null(a, b).c", []string{"a inside", "b inside"}, []string{"a b: c"}},
		{"[a, b][0].c", []string{"a inside", "b inside"}, []string{"a b: [0].c"}},
		{"powertools_json(powertools_base64(data)).id", []string{"data inside"}, []string{"data: id"}},
		{"`{\"a\":1}`.a", nil, nil},
	}
	for _, tt := range tests {
		r := MustCompile(tt.expr).reads()
		var reads, derive []string
		for _, rd := range r.Reads {
			reads = append(reads, renderPath(rd.Path)+" "+renderSlot(rd))
		}
		for _, d := range r.Derived {
			var from []string
			for _, f := range d.From {
				from = append(from, renderPath(f))
			}
			derive = append(derive, strings.Join(from, " ")+": "+strings.TrimPrefix(renderPath(d.Steps), "@"))
		}
		if !slices.Equal(reads, tt.reads) || !slices.Equal(derive, tt.derive) {
			t.Errorf("%s: reads %q, derived %q; want %q, %q", tt.expr, reads, derive, tt.reads, tt.derive)
		}
	}
}

func renderPath(path []exprpath.Step) string {
	var b strings.Builder
	for _, st := range path {
		switch st.Kind {
		case exprpath.Member:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.Name)
		case exprpath.Index:
			fmt.Fprintf(&b, "[%d]", st.Index)
		case exprpath.Each:
			b.WriteString("[*]")
		case exprpath.Flatten:
			b.WriteString("[]")
		case exprpath.Values:
			b.WriteString(".*")
		case exprpath.Document:
			b.WriteString(".<doc>")
		}
	}
	if b.Len() == 0 {
		return "@"
	}
	return b.String()
}

func renderSlot(r exprpath.Read) string {
	switch r.Slot {
	case exprpath.Whole:
		return "whole"
	case exprpath.Element:
		return fmt.Sprintf("[%d]", r.Index)
	case exprpath.Key:
		return "{" + r.Name + "}"
	}
	return "inside"
}

package idempotency

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestEndingsTable holds the one table of the middleware's errors to
// the package and to docs/errors.md: every error type the package
// declares has exactly one row, and each row gives the outcome and the
// HTTP adapter's answer that the documentation gives that error; an
// error that reaches callers only inside another has that one's.
func TestEndingsTable(t *testing.T) {
	t.Parallel()
	rows := map[string][]ending{}
	for _, e := range endings {
		name := e.err.Elem().Name()
		rows[name] = append(rows[name], e)
	}
	declared := errorTypes(t)
	for _, name := range declared {
		if n := len(rows[name]); n != 1 {
			t.Errorf("%s has %d rows in endings, want 1", name, n)
		}
	}
	for name := range rows {
		if !slices.Contains(declared, name) {
			t.Errorf("endings has a row for %s, which the package does not declare as an error", name)
		}
	}

	doc := documentedEndings(t)
	carriedBy := map[string]string{"InexactNumberError": "InvalidEventError", "CommitError": "PersistenceError"}
	for _, name := range declared {
		want, ok := doc[name]
		if !ok {
			want, ok = doc[carriedBy[name]]
		}
		if !ok {
			t.Errorf("docs/errors.md has no row for %s, nor for an error that carries it", name)
			continue
		}
		if len(rows[name]) != 1 {
			continue
		}
		got := rows[name][0]
		if !slices.Contains(want.outcomes, got.outcome) {
			t.Errorf("%s: outcome %q, docs/errors.md says %q", name, got.outcome, want.outcomes)
		}
		if got.status != want.status || got.problem != want.problem {
			t.Errorf("%s: HTTP %d %q, docs/errors.md says %d %q", name, got.status, got.problem, want.status, want.problem)
		}
	}
}

// TestMetricNames holds each outcome's metric to docs/operations.md's
// table of metrics.
func TestMetricNames(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomeConstants(t) {
		row := "| `" + metricName(o) + "` | Count | `" + string(o) + "` |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/operations.md has no row %s", row)
		}
	}
}

// errorTypes returns the exported types of the package with an Error
// method.
func errorTypes(t *testing.T) []string {
	var names []string
	for _, f := range packageFiles(t) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "Error" {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
				names = append(names, id.Name)
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no error type found")
	}
	return names
}

// outcomeConstants returns the package's constants of type Outcome.
func outcomeConstants(t *testing.T) []Outcome {
	var out []Outcome
	for _, f := range packageFiles(t) {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Outcome" {
					continue
				}
				v, _ := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
				out = append(out, Outcome(v))
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no Outcome constant found")
	}
	return out
}

func packageFiles(t *testing.T) []*ast.File {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// documented is what docs/errors.md's table of a caller's errors says
// of one error type: its outcomes, and the HTTP adapter's status and
// problem (0 and "": none of its own).
type documented struct {
	outcomes []Outcome
	status   int
	problem  string
}

var (
	docErrorName = regexp.MustCompile("^`\\*([A-Za-z]+Error)\\b")
	docOutcome   = regexp.MustCompile("`([a-z_]+)`")
	docHTTP      = regexp.MustCompile("^(\\d{3}) \\[`([a-z-]+)`\\]")
)

// documentedEndings reads docs/errors.md's table of the errors a caller
// gets, by error type; an error in two rows has the outcomes of both.
func documentedEndings(t *testing.T) map[string]documented {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]documented{}
	for line := range strings.Lines(string(data)) {
		cells := strings.Split(strings.TrimSpace(line), " | ")
		if len(cells) != 7 {
			continue
		}
		m := docErrorName.FindStringSubmatch(strings.TrimPrefix(cells[0], "| "))
		if m == nil {
			continue
		}
		d := doc[m[1]]
		for _, o := range docOutcome.FindAllStringSubmatch(cells[5], -1) {
			d.outcomes = append(d.outcomes, Outcome(o[1]))
		}
		if h := docHTTP.FindStringSubmatch(strings.TrimSuffix(cells[6], " |")); h != nil {
			d.status, _ = strconv.Atoi(h[1])
			d.problem = h[2]
		}
		doc[m[1]] = d
	}
	if len(doc) == 0 {
		t.Fatal("docs/errors.md: no table of errors found")
	}
	return doc
}

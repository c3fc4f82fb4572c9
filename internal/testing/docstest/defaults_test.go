package docstest

import (
	"flag"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

var update = flag.Bool("update", false, "rewrite the default column of docs/configuration.md from the options' doc comments")

// TestConfigurationDefaults checks that the options table of
// docs/configuration.md has a row for every option of the idempotency
// package that is not deprecated, and that the row's default is the one
// the option's doc comment states, the one place a default is written:
// run it with -update after changing a comment.
func TestConfigurationDefaults(t *testing.T) {
	t.Parallel()
	defaults := optionDefaults(t, filepath.Join(testenv.RepoRoot(), "powertools", "idempotency"))
	path := filepath.Join(testenv.RepoRoot(), "docs", "configuration.md")
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(With[A-Za-z]+)\\(([^`]*)\\)` \\| (.*) \\| (.*) \\|$")
	lines := strings.Split(string(md), "\n")
	seen := map[string]bool{}
	for i, line := range lines {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, cell := m[1], m[4]
		want, ok := defaults[name]
		if !ok {
			t.Errorf("configuration.md has a row for %s, which the package does not have", name)
			continue
		}
		seen[name] = true
		if normalize(cell) == normalize(want) {
			continue
		}
		if *update {
			lines[i] = strings.TrimSuffix(line, cell+" |") + markdown(want) + " |"
			continue
		}
		t.Errorf("configuration.md's default of %s is\n\t%s\nand its doc comment's\n\t%s", name, cell, want)
	}
	for name := range defaults {
		if !seen[name] {
			t.Errorf("configuration.md has no row for %s", name)
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// optionDefaults returns, by name, the "Default:" text that ends the doc
// comment of each option of the package in dir that is not deprecated
// ("none" for WithDefaults, which sets nothing of its own).
func optionDefaults(t *testing.T, dir string) map[string]string {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, "idempotency")
	if err != nil {
		t.Fatal(err)
	}
	var funcs []*doc.Func
	for _, typ := range d.Types {
		if typ.Name == "Option" {
			funcs = typ.Funcs
		}
	}
	defaults := map[string]string{}
	for _, f := range funcs {
		if !ast.IsExported(f.Name) || !strings.HasPrefix(f.Name, "With") || deprecated(f.Doc) {
			continue
		}
		_, def, ok := strings.Cut(f.Doc, "Default: ")
		switch {
		case ok:
			def, _, _ = strings.Cut(def, "\n\n")
		case f.Name == "WithDefaults":
			def = "none"
		default:
			t.Errorf("the doc comment of %s states no default", f.Name)
		}
		defaults[f.Name] = strings.Join(strings.Fields(def), " ")
	}
	if len(defaults) == 0 {
		t.Fatal("no options found in " + dir)
	}
	return defaults
}

// deprecated reports whether doc has a paragraph starting "Deprecated: ",
// as Go's convention marks a name kept for one release.
func deprecated(doc string) bool {
	for _, para := range strings.Split(doc, "\n\n") {
		if strings.HasPrefix(para, "Deprecated: ") {
			return true
		}
	}
	return false
}

// normalize drops what differs between a doc comment's text and the
// table's: doc links and code spans, and spacing.
func normalize(s string) string {
	s = strings.NewReplacer("[", "", "]", "", "`", "", "*", "").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// markdown writes a doc comment's default for the table: the identifiers
// of doc links, the variables and quoted text as code.
func markdown(s string) string {
	s = regexp.MustCompile(`\[\*?([A-Za-z.]+)\]`).ReplaceAllString(s, "`$1`")
	s = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b`).ReplaceAllString(s, "`$0`")
	return regexp.MustCompile(`"[^"]*"`).ReplaceAllString(s, "`$0`")
}

package docstest

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestGoBlocks compiles the Go blocks of the docs as a newcomer copies
// them: in a module of their own that requires this one through a replace
// directive, as docs/getting-started.md sets one up.
//
// A block with a package clause is a file, which must compile, pass go vet
// and be gofmt-ed. Each file is a package of its own, except a test file,
// which joins the file of its package shown before it in the same doc
// (a test file goes with the file it tests). A package whose files are
// all in another one is compiled there: README.md's function is
// docs/getting-started.md's.
//
// A block without one is a fragment: statements or declarations out of a
// program the reader has around them. It is compiled with the imports its
// package names call for, its statements in a function, and may leave
// names undefined (store, ctx, the reader's App) and declare a variable
// it does not use; any other error fails, such as a function, field or
// method that a package of the docs does not have, or an argument of the
// wrong type.
//
// A test file marked to run (runMarker) is run too, with its package:
// its tests must pass, and their output is logged. It is how a doc shows
// what a recipe does, not only that it compiles.
func TestGoBlocks(t *testing.T) {
	t.Parallel()
	bs := blocks(t, "go")
	if len(bs) == 0 {
		t.Fatal("no ```go block in the docs")
	}
	problems := compileGo(t, bs)
	for _, b := range bs {
		for _, p := range problems[b] {
			t.Errorf("%s: %s", b, p)
		}
	}
}

// TestGoBlocksCatchMistakes shows that the Go blocks' check fails on the
// mistakes that docs make as the code moves on.
func TestGoBlocksCatchMistakes(t *testing.T) {
	t.Parallel()
	mistakes := []block{
		{lang: "go", text: "if errors.Is(err, idempotency.ErrInProgress) {\n}\n"},                          // a sentinel that became a type
		{lang: "go", text: "h := idempotency.Wrap(store, fulfil, idempotency.WithExpiresAfter(\"1h\"))\n"}, // an argument of the wrong type
		{lang: "go", text: "func (a *App) Handle(ctx context.Context) error {\n\treturn nil\n}\n" +
			"var opts = idempotency.WithEventKeys(\"order_id\")\n"}, // a method, then an option that does not exist
		{lang: "go", text: "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"%d\\n\", \"one\")\n}\n"}, // go vet
		{lang: "go", text: "package main\n\nfunc main()  {}\n"},                                                      // gofmt
		{lang: "go", text: "package main\n\nfunc main() {\n\tundefinedInAFile()\n}\n"},                               // a file leaves nothing to the reader
		{lang: "go", text: "if x := ; {\n}\n"},                                                                       // not Go
		{lang: "go", run: true, text: "package claim\n\nimport \"testing\"\n\nfunc TestClaim(t *testing.T) {\n\tt.Fatal(\"the recipe does not do what the doc says\")\n}\n"}, // a test marked to run that fails
		{lang: "go", run: true, text: "package main\n\nfunc main() {}\n"}, // marked to run, but no test
	}
	for i := range mistakes {
		mistakes[i].doc, mistakes[i].line = "mistakes.md", 10*i+1
	}
	problems := compileGo(t, mistakes)
	for _, b := range mistakes {
		if len(problems[b]) == 0 {
			t.Errorf("no problem found in:\n%s", b.text)
		}
		t.Logf("%s: %q", b, problems[b])
	}
}

// compileGo compiles bs in a module of their own, and returns what is
// wrong with each.
func compileGo(t *testing.T, bs []block) map[block][]string {
	t.Helper()
	root := testenv.RepoRoot()
	dir := newModule(t)
	problems := map[block][]string{}
	var files []block
	fragment := map[block]bool{}
	for i, b := range bs {
		if packageClause.MatchString(b.text) {
			files = append(files, b)
			continue
		}
		fragment[b] = true
		src, err := wrap(b)
		if err != nil {
			problems[b] = append(problems[b], "not Go: "+strings.ReplaceAll(err.Error(), root+"/", ""))
			continue
		}
		write(t, filepath.Join(dir, "fragments", fmt.Sprint("f", i), "fragment.go"), src)
	}
	pkgs := packages(t, files, problems)
	for i, pkg := range pkgs {
		for _, f := range pkg {
			if src, err := format.Source([]byte(f.block.text)); err == nil && string(src) != f.block.text {
				problems[f.block] = append(problems[f.block], "not gofmt-ed; gofmt gives:\n"+string(src))
			}
			write(t, filepath.Join(dir, "files", fmt.Sprint("p", i), f.name), lineDirective(f.block.doc, f.block.line+1)+f.block.text)
		}
	}

	// -e: every error, not the first ten; most are a fragment's undefined
	// names, which are let through.
	out, err := goCommand(dir, "build", "-gcflags=-e", "./...")
	if err != nil && unreachable(out) {
		testenv.Unavailable(t, "the Go module proxy cannot be reached to resolve the docs' imports:\n%s", out)
	}
	out = strings.ReplaceAll(out, root+"/", "")
	if err != nil && !compileErrors.MatchString(out) {
		t.Fatalf("go build in the docs' module: %v\n%s", err, out)
	}
	left := map[block][]string{}
	for _, e := range compileErrors.FindAllStringSubmatch(out, -1) {
		b, ok := blockAt(bs, e[1], e[2])
		switch {
		case !ok:
			t.Errorf("go build: %s", e[0])
		case fragment[b] && leftToTheReader.MatchString(e[4]):
			left[b] = append(left[b], strings.TrimPrefix(e[4], ": "))
		default:
			problems[b] = append(problems[b], strings.Join(e[1:], ""))
		}
	}
	for _, b := range bs {
		if len(left[b]) > 0 {
			t.Logf("%s compiles but for what it leaves to the reader: %s", b, strings.Join(slices.Compact(slices.Sorted(slices.Values(left[b]))), "; "))
		}
	}
	for b := range fragment {
		if b.run {
			problems[b] = append(problems[b], "marked to run ("+runMarker+"), but not a test file")
		}
	}
	if len(files) > 0 {
		out, err := goCommand(dir, "vet", "./files/...")
		out = strings.ReplaceAll(out, root+"/", "")
		for _, e := range compileErrors.FindAllStringSubmatch(out, -1) {
			if b, ok := blockAt(bs, e[1], e[2]); ok && !slices.Contains(problems[b], strings.Join(e[1:], "")) {
				problems[b] = append(problems[b], "go vet: "+strings.Join(e[1:], ""))
			}
		}
		if err != nil && !compileErrors.MatchString(out) {
			t.Fatalf("go vet in the docs' module: %v\n%s", err, out)
		}
	}
	for i, pkg := range pkgs {
		runTests(t, dir, fmt.Sprint("p", i), pkg, bs, problems)
	}
	return problems
}

// runTests runs the tests of pkg, compiled in dir/files/<name>, when a
// block of bs marked to run is one of its files, and reports a failure
// as the problem of that block. A marked block that declares no test is
// a problem too.
func runTests(t *testing.T, dir, name string, pkg []goFile, bs []block, problems map[block][]string) {
	t.Helper()
	var marked []block
	for _, b := range bs {
		if b.run && slices.ContainsFunc(pkg, func(f goFile) bool { return f.block.text == b.text }) {
			marked = append(marked, b)
		}
	}
	if len(marked) == 0 {
		return
	}
	for _, b := range marked {
		if f, err := parser.ParseFile(token.NewFileSet(), b.String(), b.text, 0); err == nil && !isTest(f) {
			problems[b] = append(problems[b], "marked to run ("+runMarker+"), but declares no test")
		}
	}
	if !slices.ContainsFunc(pkg, func(f goFile) bool { return strings.HasSuffix(f.name, "_test.go") }) {
		return
	}
	out, err := goCommand(dir, "test", "-count=1", "-v", "./files/"+name)
	out = strings.ReplaceAll(out, testenv.RepoRoot()+"/", "")
	t.Logf("go test of %s:\n%s", marked[0], out)
	if err != nil {
		problems[marked[0]] = append(problems[marked[0]], "its tests fail:\n"+out)
	}
}

var (
	packageClause = regexp.MustCompile(`(?m)^package \w+`)
	// An error of the compiler, at a place of a doc (//line directives).
	compileErrors = regexp.MustCompile(`(?m)^(?:vet: )?(\S+\.md)(:\d+)(:\d+)?(: .*)$`)
	// What a fragment may leave to the code around it.
	leftToTheReader = regexp.MustCompile(`^: (undefined: \w+|declared and not used: \w+)$`)
)

// newModule makes the reader's module in a temporary folder, and returns
// the folder. It requires the modules of testdata/docs.mod at their
// pinned versions; its go.sum is this repository's and testdata/docs.sum,
// so that the network is needed only to download a module the first
// time, and what the proxy serves is checked against the recorded sums.
func newModule(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot()
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(read(t, filepath.Join(root, "go.mod")))
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), fmt.Sprintf(`module example.com/docs

go %s

require github.com/gopowertools/lambda v0.0.0-00010101000000-000000000000

replace github.com/gopowertools/lambda => %s

%s`, goVersion[1], root, read(t, filepath.Join("testdata", "docs.mod"))))
	write(t, filepath.Join(dir, "go.sum"), read(t, filepath.Join(root, "go.sum"))+read(t, filepath.Join("testdata", "docs.sum")))
	return dir
}

// goCommand runs the go command in the module dir. -mod=mod lets it add
// the requirements that the blocks' imports call for.
func goCommand(dir string, args ...string) (string, error) {
	return output(exec.Command("go", args...), dir,
		"GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
}

// unreachable reports whether the go command's output says that it could
// not reach the network.
func unreachable(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "network is unreachable", "TLS handshake timeout"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// lineDirective makes the compiler name the doc's lines in its errors:
// the line after it is line of doc.
func lineDirective(doc string, line int) string {
	return fmt.Sprintf("//line %s:%d:1\n", filepath.Join(testenv.RepoRoot(), doc), line)
}

// blockAt returns the block that holds line of doc.
func blockAt(bs []block, doc, line string) (block, bool) {
	n, _ := strconv.Atoi(strings.TrimPrefix(line, ":"))
	for _, b := range bs {
		if b.doc == doc && n > b.line && n <= b.line+strings.Count(b.text, "\n") {
			return b, true
		}
	}
	return block{}, false
}

// A goFile is a file block, under the name it gets in its package.
type goFile struct {
	block block
	name  string
}

// packages groups the file blocks into packages, and leaves out the ones
// whose files are all in another.
func packages(t *testing.T, files []block, problems map[block][]string) [][]goFile {
	t.Helper()
	var pkgs [][]goFile
	last := map[string]int{} // doc and package name: index in pkgs
	for _, b := range files {
		f, err := parser.ParseFile(token.NewFileSet(), b.String(), b.text, 0)
		if err != nil {
			problems[b] = append(problems[b], "not Go: "+err.Error())
			continue
		}
		name := fmt.Sprintf("%s_%d", strings.TrimSuffix(filepath.Base(b.doc), ".md"), b.line)
		key := b.doc + " " + f.Name.Name
		if i, ok := last[key]; ok && isTest(f) {
			pkgs[i] = append(pkgs[i], goFile{b, name + "_test.go"})
			continue
		}
		if isTest(f) {
			name += "_test"
		}
		last[key] = len(pkgs)
		pkgs = append(pkgs, []goFile{{b, name + ".go"}})
	}
	var kept [][]goFile
	for i, p := range pkgs {
		j := slices.IndexFunc(pkgs, func(q []goFile) bool {
			return len(q) > len(p) && within(p, q)
		})
		if j < 0 {
			j = slices.IndexFunc(pkgs[:i], func(q []goFile) bool { return len(q) == len(p) && within(p, q) })
		}
		if j >= 0 {
			t.Logf("%s is compiled with %s", p[0].block, pkgs[j][0].block)
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// within reports whether every file of p is also in q.
func within(p, q []goFile) bool {
	for _, f := range p {
		if !slices.ContainsFunc(q, func(g goFile) bool { return g.block.text == f.block.text }) {
			return false
		}
	}
	return true
}

// isTest reports whether a file declares tests, examples, benchmarks or
// fuzz tests, and so must be named _test.go.
func isTest(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
			for _, prefix := range []string{"Test", "Example", "Benchmark", "Fuzz"} {
				if strings.HasPrefix(fn.Name.Name, prefix) {
					return true
				}
			}
		}
	}
	return false
}

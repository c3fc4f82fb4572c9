package apirecord

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

var update = flag.Bool("update", false, "rewrite api/*.txt from the code")

const module = "github.com/gopowertools/lambda"

// TestAPI compares each library package's exported API with its record.
func TestAPI(t *testing.T) {
	t.Parallel()
	root := testenv.RepoRoot()
	pkgs := list(t, root)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		p, ok := pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	var libs []string
	for path, p := range pkgs {
		if isLibrary(p) {
			libs = append(libs, path)
		}
	}
	slices.Sort(libs)
	if len(libs) == 0 {
		t.Fatal("no library package found")
	}
	for _, path := range libs {
		p := pkgs[path]
		tp, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		got := describe(tp, deprecated(t, p))
		file := recordFile(root, path)
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s has no API record (%v): run `make api`, and say what it adds in CHANGELOG.md", path, err)
			continue
		}
		if d := diff(lines(string(data)), got); len(d) > 0 {
			t.Errorf("the exported API of %s differs from %s:\n\t%s\nIf the change is meant, run `make api` and say it in CHANGELOG.md's Unreleased section, in the same commit; a removed name stays one release as a Deprecated alias where it can.",
				path, rel(root, file), strings.Join(d, "\n\t"))
		}
	}
	if *update {
		return
	}
	// A record whose package is gone is a removal too.
	err := filepath.WalkDir(filepath.Join(root, "api"), func(f string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(f, ".txt") {
			return err
		}
		path := module + "/" + strings.TrimSuffix(rel(filepath.Join(root, "api"), f), ".txt")
		if !slices.Contains(libs, path) {
			t.Errorf("%s records package %s, which the library no longer has: delete the file and say so in CHANGELOG.md", rel(root, f), path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listed is what go list says of a package.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	DepOnly    bool
	Module     *struct{ Path string }
}

// list returns the module's packages and their dependencies, with the
// export data of each, built by go list.
func list(t *testing.T, root string) map[string]listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// isLibrary reports whether p is a package that users import: the
// module's own, outside internal/, cmd/ and examples/.
func isLibrary(p listed) bool {
	if p.DepOnly || p.Module == nil || p.Module.Path != module {
		return false
	}
	rest := strings.TrimPrefix(p.ImportPath, module)
	for _, part := range strings.Split(rest, "/") {
		if part == "internal" || part == "cmd" || part == "examples" {
			return false
		}
	}
	return true
}

// recordFile is the API record of the package path: api/<path in the
// module>.txt.
func recordFile(root, path string) string {
	return filepath.Join(root, "api", filepath.FromSlash(strings.TrimPrefix(path, module+"/"))+".txt")
}

func rel(base, file string) string {
	r, err := filepath.Rel(base, file)
	if err != nil {
		return file
	}
	return filepath.ToSlash(r)
}

// deprecated returns the identifiers of p's files whose doc comment has
// a "Deprecated:" paragraph.
func deprecated(t *testing.T, p listed) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return deprecatedIn(files)
}

// deprecatedIn returns the identifiers of files whose doc comment has a
// "Deprecated:" paragraph: "Name", "Type.Method" and "Type.Field".
func deprecatedIn(files []*ast.File) map[string]bool {
	marked := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					name = receiverName(d.Recv.List[0].Type) + "." + name
				}
				if isDeprecated(d.Doc) {
					marked[name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if isDeprecated(d.Doc, s.Doc) {
							marked[s.Name.Name] = true
						}
						fieldsDeprecated(s, marked)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if isDeprecated(d.Doc, s.Doc) {
								marked[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return marked
}

// isDeprecated reports whether a doc comment of groups has a paragraph
// starting "Deprecated: ", as Go's convention has it.
func isDeprecated(groups ...*ast.CommentGroup) bool {
	for _, g := range groups {
		if g == nil {
			continue
		}
		for _, para := range strings.Split(g.Text(), "\n\n") {
			if strings.HasPrefix(para, "Deprecated: ") {
				return true
			}
		}
	}
	return false
}

// fieldsDeprecated marks the deprecated fields and interface methods of s.
func fieldsDeprecated(s *ast.TypeSpec, marked map[string]bool) {
	var fields *ast.FieldList
	switch ty := s.Type.(type) {
	case *ast.StructType:
		fields = ty.Fields
	case *ast.InterfaceType:
		fields = ty.Methods
	default:
		return
	}
	for _, f := range fields.List {
		if !isDeprecated(f.Doc) {
			continue
		}
		for _, n := range f.Names {
			marked[s.Name.Name+"."+n.Name] = true
		}
		if len(f.Names) == 0 { // embedded
			marked[s.Name.Name+"."+receiverName(f.Type)] = true
		}
	}
}

// receiverName is the type name of a receiver or embedded field: T of T,
// *T, T[P] or pkg.T.
func receiverName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

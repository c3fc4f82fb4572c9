package apirecord

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// TestDiffNamesEachChange shows that the record catches the changes it
// exists for: an added, a removed and a changed identifier of each kind,
// on a package type-checked here from source, before and after.
func TestDiffNamesEachChange(t *testing.T) {
	t.Parallel()
	before := `package p

import "context"

// Deprecated: use New.
func Old() {}
func New(context.Context, ...int) (*Store, error) { return nil, nil }
const Version = "v1"
type Store struct{ Table string; n int }
func (s *Store) Get(ctx context.Context, key string) error { return nil }
func (s Store) Name() string { return "" }
type Getter interface{ Get(context.Context, string) error }
`
	after := `package p

import "context"

func New(ctx context.Context, n ...int) (*Store, error) { return nil, nil }
func Added() {}
const Version = "v2"
type Store struct{ Table []string; Region string }
func (s *Store) Get(ctx context.Context, key []byte) error { return nil }
func (s *Store) Name() string { return "" }
type Getter interface{ Get(context.Context, string) error; Put() }
`
	got := diff(record(t, before), record(t, after))
	want := []string{
		"added:   field Store.Region string",
		"added:   func Added()",
		"added:   imethod Getter.Put()",
		"changed: const Version untyped string = \"v1\"\n\t     to: const Version untyped string = \"v2\"",
		"changed: field Store.Table string\n\t     to: field Store.Table []string",
		"changed: method (*Store) Get(context.Context, string) error\n\t     to: method (*Store) Get(context.Context, []byte) error",
		"removed: func Old() // deprecated",
		"removed: method (Store) Name() string",
		"added:   method (*Store) Name() string",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// New's parameter names changed, and the unexported field went: no
	// user's code can tell, and the record does not either.
	for _, l := range got {
		if strings.Contains(l, "func New") || strings.Contains(l, ".n ") {
			t.Errorf("a change no user can see is reported: %s", l)
		}
	}
}

// record type-checks src and returns its API record.
func record(t *testing.T, src string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return describe(pkg, deprecatedIn([]*ast.File{f}))
}

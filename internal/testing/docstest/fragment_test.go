package docstest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
)

// importPaths are the packages a fragment names without showing its
// imports, under the names the docs use. A name missing here reads as a
// name left to the reader, and what the fragment takes from it goes
// unchecked: add the packages that new docs use.
var importPaths = map[string]string{
	"idempotency":     "github.com/gopowertools/lambda/powertools/idempotency",
	"idempotencytest": "github.com/gopowertools/lambda/powertools/idempotency/idempotencytest",
	"httpapi":         "github.com/gopowertools/lambda/powertools/idempotency/httpapi",
	"redis":           "github.com/gopowertools/lambda/redis",
	"responsestore":   "github.com/gopowertools/lambda/powertools/idempotency/responsestore",
	"batch":           "github.com/gopowertools/lambda/powertools/batch",
	"dynamo":          "github.com/gopowertools/lambda/dynamo",
	"jmespath":        "github.com/gopowertools/lambda/jmespath",

	"lambda":   "github.com/aws/aws-lambda-go/lambda",
	"events":   "github.com/aws/aws-lambda-go/events",
	"aws":      "github.com/aws/aws-sdk-go-v2/aws",
	"config":   "github.com/aws/aws-sdk-go-v2/config",
	"dynamodb": "github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"types":    "github.com/aws/aws-sdk-go-v2/service/dynamodb/types",
	"kms":      "github.com/aws/aws-sdk-go-v2/service/kms",
	"s3":       "github.com/aws/aws-sdk-go-v2/service/s3",
	"sqs":      "github.com/aws/aws-sdk-go-v2/service/sqs",
	"goredis":  "github.com/redis/go-redis/v9",

	"bytes":   "bytes",
	"context": "context",
	"crypto":  "crypto",
	"errors":  "errors",
	"fmt":     "fmt",
	"http":    "net/http",
	"json":    "encoding/json",
	"log":     "log",
	"os":      "os",
	"slog":    "log/slog",
	"strings": "strings",
	"time":    "time",
	"tls":     "crypto/tls",
}

// wrap turns a fragment into a file of package fragment: its declarations
// at the top level, its statements in functions, each part under a //line
// directive naming its place in the doc, with an import for each package
// name it uses and does not declare itself.
//
// A declaration is a line that starts with func or type, up to its closing
// line, "}" or ")" alone; the other lines are statements.
func wrap(b block) (string, error) {
	lines := strings.SplitAfter(b.text, "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	directive := func(i int) string { return lineDirective(b.doc, b.line+1+i) }
	var body strings.Builder
	for i := 0; i < len(lines); {
		start := i
		if topLevel(lines[i]) {
			i = declarationEnd(lines, i)
			fmt.Fprintf(&body, "\n%s%s", directive(start), strings.Join(lines[start:i], ""))
			continue
		}
		for i < len(lines) && !topLevel(lines[i]) {
			i++
		}
		fmt.Fprintf(&body, "\nfunc _() {\n%s%s}\n", directive(start), strings.Join(lines[start:i], ""))
	}

	f, err := parser.ParseFile(token.NewFileSet(), "fragment.go", "package fragment\n"+body.String(), parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	declared := declaredNames(f)
	var imports []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && importPaths[id.Name] != "" && !declared[id.Name] && !slices.Contains(imports, id.Name) {
				imports = append(imports, id.Name)
			}
		}
		return true
	})
	var src strings.Builder
	src.WriteString("package fragment\n\nimport (\n")
	for _, name := range imports {
		fmt.Fprintf(&src, "\t%s %q\n", name, importPaths[name])
	}
	src.WriteString(")\n")
	src.WriteString(body.String())
	return src.String(), nil
}

func topLevel(line string) bool {
	return strings.HasPrefix(line, "func ") || strings.HasPrefix(line, "type ")
}

// declarationEnd returns the index of the line after the declaration that
// starts at lines[start].
func declarationEnd(lines []string, start int) int {
	if l := strings.TrimSpace(lines[start]); !strings.HasSuffix(l, "{") && !strings.HasSuffix(l, "(") {
		return start + 1
	}
	end := slices.IndexFunc(lines[start+1:], func(l string) bool { return l == "}\n" || l == ")\n" })
	if end < 0 {
		return len(lines)
	}
	return start + 1 + end + 1
}

// declaredNames returns the names a file declares anywhere, in any scope:
// a fragment that declares log has no use for package log.
func declaredNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	add := func(ids ...*ast.Ident) {
		for _, id := range ids {
			names[id.Name] = true
		}
	}
	fields := func(l *ast.FieldList) {
		if l != nil {
			for _, field := range l.List {
				add(field.Names...)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.ValueSpec:
			add(n.Names...)
		case *ast.TypeSpec:
			add(n.Name)
		case *ast.FuncDecl:
			add(n.Name)
			fields(n.Recv)
		case *ast.FuncType:
			fields(n.Params)
			fields(n.Results)
		}
		return true
	})
	return names
}

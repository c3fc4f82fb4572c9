package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// The docs show this example's files whole; this test keeps them equal, so
// that the code a reader copies is the code that compiles here, and the
// template the one cfn-lint checks (`make lint-template`).
func TestDocsShowThisExample(t *testing.T) {
	t.Parallel()
	mainGo := read(t, "main.go")
	mainGo = mainGo[strings.Index(mainGo, "package main"):] // the file's own comment is not in the docs
	testGo := read(t, "main_test.go")
	testGo = testGo[strings.Index(testGo, "package main"):]
	files := []struct {
		name, lang, content string
	}{
		{"main.go", "go", mainGo},
		{"template.yaml", "yaml", read(t, "template.yaml")},
		{"Makefile", "make", read(t, "Makefile")},
		{"main_test.go", "go", testGo},
		{"createtable/main.go", "go", read(t, filepath.Join("createtable", "main.go"))},
	}
	docs := map[string][]string{
		"docs/getting-started.md": {"main.go", "main_test.go", "createtable/main.go", "template.yaml", "Makefile"},
		"docs/testing.md":         {"main_test.go"},
		"README.md":               {"main.go"},
	}
	for doc, want := range docs {
		text := read(t, filepath.Join(testenv.RepoRoot(), doc))
		for _, f := range files {
			if !slices.Contains(want, f.name) {
				continue
			}
			block := "```" + f.lang + "\n" + f.content + "```\n"
			if !strings.Contains(text, block) {
				t.Errorf("%s does not show examples/minimal/%s as it is: copy the file into its ```%s block", doc, f.name, f.lang)
			}
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

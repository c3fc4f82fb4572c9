package emulator

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Binary is the function binary of a main package, built the first time a test asks for it and shared by the
// rest of the test binary: a build takes seconds, a test run has dozens of
// tests. Its zero value builds without extra tags.
//
// A once-per-binary build outlives every test, so t.Cleanup cannot remove
// it: the package's test binary calls [Binary.Remove] after m.Run.
//
// A Binary is safe for concurrent use.
type Binary struct {
	// Dir is the main package's directory. Default: the working
	// directory, which is the package under test.
	Dir string
	// Tags are build tags on top of lambda.norpc (see [Build]).
	Tags []string

	once sync.Once
	dir  string
	path string
	err  error
}

// Path returns the binary's path, building it on the first call. A failed
// build fails every test that asks.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "e2e-bootstrap-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "bootstrap")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		dir := b.Dir
		if dir == "" {
			dir = "."
		}
		b.err = Build(ctx, dir, b.path, b.Tags...)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Copy returns a copy of the binary in the test's temporary directory.
// Its path is the test's own, so that a test that kills the function
// process by its executable finds exactly its own.
func (b *Binary) Copy(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile(b.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bootstrap")
	if err := os.WriteFile(path, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Remove deletes the binary, if it was built.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

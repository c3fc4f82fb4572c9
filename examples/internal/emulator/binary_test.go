package emulator

import (
	"bytes"
	"os"
	"testing"
)

func TestBinaryBuildsOnceAndCopies(t *testing.T) {
	t.Parallel()
	b := &Binary{Dir: "testdata/echo"}
	path := b.Path(t)
	if again := b.Path(t); again != path {
		t.Fatalf("second Path = %s, want the first build %s", again, path)
	}
	built, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// A copy has a path of its own, the same bytes, and runs.
	cp := b.Copy(t)
	if cp == path {
		t.Fatalf("Copy = %s, the shared binary itself", cp)
	}
	copied, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copied, built) {
		t.Error("the copy differs from the build")
	}
	fi, err := os.Stat(cp)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("copy mode %v, want executable", fi.Mode())
	}

	b.Remove()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("after Remove, Stat(%s) = %v; want not exist", path, err)
	}
}

func TestBinaryRemoveBeforeBuild(t *testing.T) {
	t.Parallel()
	var b Binary
	b.Remove() // nothing built: nothing to remove, no panic
}

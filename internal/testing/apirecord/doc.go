// Package apirecord holds the test that keeps the library's exported API
// equal to its record under api/ at the repository's root: one text file
// per library package, a line per exported identifier with its signature,
// in the manner of Go's own api/go1.*.txt.
//
// The test fails when the code and the record differ, naming each added,
// removed and changed identifier. Changing the API is then a deliberate
// act: regenerate the record with `make api` (go test
// ./internal/testing/apirecord -update) and say what changed in CHANGELOG.md's
// Unreleased section, in the same commit.
//
// The library is every package of the module outside internal/, cmd/ and
// examples/. The types come from the compiler's export data (go list
// -export), so the record is what a user's code compiles against;
// parameter names are left out, since renaming one breaks nobody.
// Identifiers whose doc comment has a "Deprecated:" paragraph are marked
// "deprecated", so that a removal announced a release ahead shows in the
// record.
package apirecord

// Package golden keeps records as this library writes them, in files
// under a package's testdata/golden, and helps the tests that check them
// both ways: the records written now, at a fixed clock and lease token,
// must equal the files byte for byte, and each file, loaded into a real
// server, must read to the outcome its test names (a replay's bytes, an
// *idempotency.InProgressError with its lease end...). A change to what
// is written or read then fails those tests until the files are
// regenerated on purpose:
//
//	make golden
//
// docs/record-format.md says what a change of the format must keep, so
// that two versions can share a table during a rolling deploy.
//
// It holds test helpers only: no library package imports it.
package golden

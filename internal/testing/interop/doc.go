// Package interop holds the tests that run this library against the real
// Powertools for AWS Lambda, Python 3.37.0 and TypeScript 2.35.0 as
// bench/powertools/install.sh installs them under .tools/, to prove the
// compatibility modes (idempotency.WithCompatibility):
//
//   - Keys: on every event fixture of jmespath/testdata/events with
//     the key expressions the documentation shows, and on generated events
//     (nested objects, numbers with fractions and exponents, non-ASCII
//     text, escapes), the Go key and payload hash equal the ones each
//     Powertools runtime computes, all cases in one process per runtime
//     (testdata/keys.py, testdata/keys.mjs).
//   - Numbers: near the edges of what a double holds, every number
//     the Go key accepts has the runtime's key, and every number it
//     refuses (idempotency.InexactNumberError) the runtime keys as another
//     number: 100.00000000000000001 as 100.0, 1e400 as 2e400, and in
//     TypeScript 9007199254740993 as 9007199254740992.
//   - A shared table: a Go function and a Powertools function sharing one
//     moto table replay each other's records, detect each other's payload
//     conflicts, and wait for each other's live leases
//     (testdata/function.py, testdata/function.mjs).
//   - Golden records: the records each Powertools runtime writes, kept in
//     testdata/golden (-update writes them anew, with moto and both
//     runtimes), are read by a Go function in that runtime's mode as
//     that runtime would: replayed, a payload conflict, a live lease.
//
// Without .tools/bench-python or .tools/bench-node, or without moto
// (scripts/with-servers.sh), the tests skip with a message; under CI
// (CI=true) they fail. The package has no code of its own.
package interop

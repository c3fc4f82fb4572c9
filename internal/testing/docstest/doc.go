// Package docstest checks that what README.md and docs/*.md tell a reader
// to copy or to run does run. It holds tests only:
//
//   - The Go blocks: each is compiled of the docs in a module of its
//     own that reaches this repository through a replace directive, as a
//     newcomer's module does (docs/getting-started.md), and requires the
//     other modules the blocks import at the versions testdata/docs.mod
//     pins (OpenTelemetry: the library itself never requires them), and
//     runs the tests of the blocks marked to run (below).
//   - The commands the docs tell a reader to run here:
//     the make targets exist, the package patterns of go commands match
//     packages, the tool versions are the ones scripts/tools.sh pins, and
//     the idempotency command's lines run as shown.
//   - The sam commands of docs/deploying.md and
//     docs/getting-started.md that need no AWS account (sam validate
//     --lint, sam build) run on scratch copies. They need the SAM CLI, and run
//     under `make sam-check` (part of `make test`), which installs it.
//
// A Go block that is a test file, whose fence follows the line
//
//	<!-- docstest: run -->
//
// is run, not only compiled, with the file of its package shown before
// it: its tests must pass, and their output is logged (go test -v
// ./internal/testing/docstest shows it). The marker is
// an HTML comment, which a rendered page does not show. A marked block
// that is not a test file is a failure.
package docstest

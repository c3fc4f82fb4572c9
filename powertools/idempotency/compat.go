package idempotency

import (
	"context"
	"fmt"

	"github.com/gopowertools/lambda/internal/keyformat"
)

// Compatibility is the format of a wrapper's keys and records: this
// library's own, or that of a Powertools for AWS Lambda runtime whose
// functions share the table, so that a team can move its functions to Go
// one at a time. In a compatibility mode, a Go function and a Powertools
// function given the same event, key expression and key prefix compute the
// same key and payload hash, each replays the other's COMPLETED record,
// and each waits for the other's live INPROGRESS lease. docs/comparison.md
// says exactly what each mode matches, and which of this library's
// guarantees hold only while every writer of a key is a Go function.
type Compatibility int

const (
	// OwnFormat is this library's format: the key is the hex SHA-256 (or
	// the hash of [WithHash]) of the selected value's canonical JSON
	// (numbers as written). It is the default.
	OwnFormat Compatibility = iota
	// PowertoolsPython is the format of Powertools for AWS Lambda (Python),
	// the reference implementation: the key is the hex MD5 (by default)
	// of json.dumps(value, sort_keys=True), and the key prefix of a handler is
	// "<function>.<module>.<function name>" (see [WithPythonHandler]).
	// Records are the same as this library's.
	PowertoolsPython
	// PowertoolsTypeScript is the format of Powertools for AWS Lambda
	// (TypeScript): the key is the base64 MD5 (by default) of
	// JSON.stringify(deepSort(value)), with the key prefix of a handler
	// (the function's name). A store keeps the response as that runtime
	// does: github.com/gopowertools/lambda/dynamo.Store as DynamoDB's own
	// types (a map for an object), not as JSON text.
	PowertoolsTypeScript
)

// String returns the spelling of c in POWERTOOLS_IDEMPOTENCY_COMPATIBILITY:
// "own", "python" or "typescript".
func (c Compatibility) String() string {
	switch c {
	case OwnFormat:
		return "own"
	case PowertoolsPython:
		return "python"
	case PowertoolsTypeScript:
		return "typescript"
	}
	return fmt.Sprintf("Compatibility(%d)", int(c))
}

// compatContext returns ctx carrying the wrapper's compatibility for the
// store (see keyformat.ModeOf), or ctx itself in the own format when no
// enclosing invocation set one (so the default path costs nothing).
func (e *engine) compatContext(ctx context.Context) context.Context {
	if e.keys.Mode == keyformat.Own && keyformat.ModeOf(ctx) == keyformat.Own {
		return ctx
	}
	return keyformat.WithMode(ctx, e.keys.Mode)
}

package batch

import (
	"context"
	"log/slog"
)

type recordKey struct{}

// current is what the record function's context carries about its record.
type current struct {
	id     string
	index  int
	logger *slog.Logger
}

// RecordID returns the identifier of the record that ctx belongs to (the
// SQS message id or the stream sequence number), and false outside a
// record function.
func RecordID(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(recordKey{}).(*current)
	if !ok {
		return "", false
	}
	return c.id, true
}

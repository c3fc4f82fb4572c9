package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/internal/simclock"
)

// answerMargin is the time that a store call leaves before the
// invocation's deadline: enough for the middleware to return its error,
// the HTTP adapter to write its 503, and Lambda's runtime to post the
// answer, with room for a loaded machine. It is the margin the middleware
// keeps for the same reason before trying a COMPLETED write again.
const answerMargin = 500 * time.Millisecond

// bound returns ctx with its deadline brought forward by answerMargin. A
// command that has no answer by then fails, and the middleware returns an
// [*idempotency.PersistenceError] while the invocation can still answer
// (a 503 through the HTTP adapter), instead of waiting on a hung server
// until Lambda ends the invocation as timed out. A ctx without a deadline
// (the middleware's writes after the handler, an operator's tool) is
// returned as it is.
//
// go-redis applies a context's deadline to the connection only with
// ContextTimeoutEnabled, which [ClientFromEnv] and [ClusterClientFromEnv]
// set; without it, the deadline stops only its retries and its wait for a
// connection, and ReadTimeout and WriteTimeout bound each attempt.
func bound(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	return simclock.WithDeadline(ctx, d.Add(-answerMargin))
}

// boundError is err, from a command sent under bounded, a context made by
// bound from parent, saying so when the bound is what ended it.
func boundError(parent, bounded context.Context, err error) error {
	if errors.Is(bounded.Err(), context.DeadlineExceeded) && parent.Err() == nil {
		return fmt.Errorf("no answer before the invocation's deadline less %v, kept to answer: %w", answerMargin, err)
	}
	return err
}

package batch

import (
	"errors"
	"log/slog"
	"time"
)

// Processor runs the records of a batch. Build one with [New] at cold
// start and reuse it: it is safe for concurrent use. The zero value runs
// one record at a time, stops a FIFO batch at its first failure and logs
// with [slog.Default].
type Processor struct {
	concurrency int
	skipGroup   bool
	margin      time.Duration
	logger      *slog.Logger
}

// Option configures a [Processor].
type Option func(*Processor) error

// New returns a Processor with opts applied. An invalid option gives a
// [*ConfigError].
func New(opts ...Option) (*Processor, error) {
	p := &Processor{}
	for _, opt := range opts {
		if err := opt(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// mustNew is New for the handler builders, which run at cold start: a bad
// option there is a programming error that should stop the function before
// it takes traffic.
func mustNew(opts []Option) *Processor {
	p, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return p
}

// WithConcurrency runs up to n records at once (default 1). Each record
// runs in its own goroutine from a pool of at most n, and all of them end
// before the call returns. For a FIFO queue, see the package doc: records
// of one message group never overlap.
//
// Size n against what the records call: Lambda may run as many batches at
// once as the event source mapping's MaximumConcurrency, so a downstream
// can see up to MaximumConcurrency x n calls at once.
func WithConcurrency(n int) Option {
	return func(p *Processor) error {
		if n < 1 {
			return &ConfigError{Name: "WithConcurrency", Err: errors.New("must be at least 1")}
		}
		p.concurrency = n
		return nil
	}
}

// WithSkipGroupOnFailure changes what a failure does on an SQS FIFO queue:
// instead of failing every later record of the batch (the default), only
// the later records of the same message group are skipped, and the other
// groups go on. It has no effect on other sources.
func WithSkipGroupOnFailure(skip bool) Option {
	return func(p *Processor) error {
		p.skipGroup = skip
		return nil
	}
}

// WithDeadlineMargin makes the batch end d before the invocation's
// deadline (ctx.Deadline) instead of at it (default 0: at it). The record
// functions get a context that ends d early, and records not started by
// then are failed without running, so the handler still returns its
// partial batch response in time. Without a margin, a batch that runs into
// the function timeout returns nothing: Lambda retries every record,
// successes included, and counts one more receive against each.
//
// Choose d to cover sending the response, and what a record must not be
// cut off in (a downstream call under way is abandoned at the deadline).
func WithDeadlineMargin(d time.Duration) Option {
	return func(p *Processor) error {
		if d < 0 {
			return &ConfigError{Name: "WithDeadlineMargin", Err: errors.New("must not be negative")}
		}
		p.margin = d
		return nil
	}
}

// WithLogger sets the logger for failed records. To log nothing, pass
// slog.New(slog.DiscardHandler). Nil restores the default, as in the
// idempotency package.
//
// Default: slog.Default(), looked up when logging.
func WithLogger(l *slog.Logger) Option {
	return func(p *Processor) error {
		p.logger = l
		return nil
	}
}

func (p *Processor) log() *slog.Logger {
	if p.logger == nil {
		return slog.Default()
	}
	return p.logger
}

func (p *Processor) workers() int {
	if p.concurrency < 1 {
		return 1
	}
	return p.concurrency
}

package batch

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// records is a batch as the engine sees it, whatever its source: the
// engine is written once, and each source adapts its event to this.
type records interface {
	len() int
	id(i int) string
	// group is the FIFO message group of record i ("" outside SQS FIFO).
	group(i int) string
	call(ctx context.Context, i int) error
}

// run processes b and returns the failures in record order. fifo selects
// the ordered rules of SQS FIFO queues.
func (p *Processor) run(ctx context.Context, b records, fifo bool) *Result {
	n := b.len()
	res := &Result{Total: n}
	if n == 0 {
		return res
	}
	if deadline, ok := ctx.Deadline(); ok && p.margin > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-p.margin))
		defer cancel()
	}
	// One slot per record, each written by exactly one goroutine and read
	// after all of them have ended: results keep record order for free.
	errs := make([]error, n)
	switch {
	case fifo && p.skipGroup:
		p.runGroups(ctx, b, errs)
	case fifo:
		p.runUntilFailure(ctx, b, errs)
	default:
		p.pool(n, func(i int) { errs[i] = p.runOne(ctx, b, i) })
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		f := &RecordError{ID: b.id(i), Index: i, Err: err}
		res.Failures = append(res.Failures, f)
		p.logFailure(ctx, f)
	}
	return res
}

// runOne runs record i, unless ctx is already done: a record started that
// late could not finish before the sandbox is frozen, so it is failed
// untouched and Lambda delivers it again.
func (p *Processor) runOne(ctx context.Context, b records, i int) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	rctx := context.WithValue(ctx, recordKey{}, &current{id: b.id(i), index: i, logger: p.log()})
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return b.call(rctx, i)
}

// runUntilFailure is the default FIFO rule: one record at a time, and after
// the first failure nothing more runs, so that no message of the batch
// overtakes an earlier one that will be delivered again.
func (p *Processor) runUntilFailure(ctx context.Context, b records, errs []error) {
	failed := -1
	for i := range errs {
		if failed >= 0 {
			errs[i] = &SkippedError{FailedID: b.id(failed)}
			continue
		}
		if errs[i] = p.runOne(ctx, b, i); errs[i] != nil {
			failed = i
		}
	}
}

// runGroups is the FIFO rule with WithSkipGroupOnFailure: each message
// group runs in order and stops at its first failure; groups are
// independent, so they may run in parallel.
func (p *Processor) runGroups(ctx context.Context, b records, errs []error) {
	if p.workers() <= 1 {
		// One record at a time: in record order, as Powertools walks
		// them, each group skipped from its first failure on.
		failed := map[string]int{}
		for i := range errs {
			g := b.group(i)
			if f, ok := failed[g]; ok {
				errs[i] = &SkippedError{FailedID: b.id(f)}
				continue
			}
			if errs[i] = p.runOne(ctx, b, i); errs[i] != nil {
				failed[g] = i
			}
		}
		return
	}
	var order []string
	members := make(map[string][]int)
	for i := range errs {
		g := b.group(i)
		if _, seen := members[g]; !seen {
			order = append(order, g)
		}
		members[g] = append(members[g], i)
	}
	p.pool(len(order), func(gi int) {
		failed := -1
		for _, i := range members[order[gi]] {
			if failed >= 0 {
				errs[i] = &SkippedError{FailedID: b.id(failed)}
				continue
			}
			if errs[i] = p.runOne(ctx, b, i); errs[i] != nil {
				failed = i
			}
		}
	})
}

// pool calls do(0) ... do(n-1) on at most p.workers() goroutines, and
// returns when all calls have returned. With one worker it starts no
// goroutine at all.
func (p *Processor) pool(n int, do func(i int)) {
	workers := min(p.workers(), n)
	if workers <= 1 {
		for i := range n {
			do(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				do(i)
			}
		})
	}
	wg.Wait()
}

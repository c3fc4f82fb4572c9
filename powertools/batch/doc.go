// Package batch processes the records of an SQS, Kinesis or DynamoDB
// Streams event one by one with the caller's function, and builds the
// partial batch response that Lambda expects when the event source mapping
// has FunctionResponseTypes set to ReportBatchItemFailures.
//
// Why partial responses: without them, one failing record makes Lambda
// retry the whole batch, and every record that had already succeeded runs
// again. With them, only the records listed in batchItemFailures come back.
//
// # Rules
//
//   - A record whose function returns an error, or panics, is failed; the
//     other records still succeed. A panic is recovered into a [*PanicError]
//     that carries the stack, because one poison record must not take the
//     whole batch (and the records already done) down with it.
//   - When every record of a non-empty batch fails, [Result.Err] returns a
//     [*BatchError] for the handler to return, so that Lambda retries the
//     batch as a whole. An empty batch succeeds.
//   - Records not yet started when ctx is done (the invocation is about to
//     time out) are not run: they are failed with ctx's error, so Lambda
//     hands them back instead of losing them when the sandbox is frozen.
//     [WithDeadlineMargin] moves that point before the deadline, so that
//     the partial response still gets out.
//   - SQS FIFO queues (event source ARN ending in ".fifo"): processing stops
//     at the first failure, which is reported together with every record
//     after it ([*SkippedError]), so that no message overtakes one before it.
//     With [WithSkipGroupOnFailure], only the later records of the failed
//     message group (the MessageGroupId attribute) are skipped, and the
//     other groups go on.
//   - Kinesis and DynamoDB Streams: failures are reported by sequence
//     number; Lambda checkpoints before the lowest one reported.
//
// # Concurrency
//
// Records run one at a time by default. [WithConcurrency] runs up to n at
// once, in goroutines that all end before the call returns. Results are
// reported in record order whatever the order of completion. On a FIFO
// queue, records of one message group never run at the same time: in the
// default stop-at-first-failure mode a FIFO batch runs one record at a time
// (stopping at the first failure means nothing after it may have started);
// with [WithSkipGroupOnFailure], groups run in parallel, each in order, and
// one at a time (the default) the records run in the batch's order.
//
// # Idempotency per record
//
// Lambda delivers each record at least once, and a producer may send the
// same business event twice under two message ids. Wrap the effect with
// [github.com/gopowertools/lambda/powertools/idempotency.WrapFunc], keyed on
// a business value of the body (an order id), not on the message id; see
// the package example.
//
// # Logging
//
// Each failed record is logged once, in record order, with its identifier
// (record_id) and position (record_index). Inside the record function,
// [Logger] returns a logger that carries the same two attributes, and a
// logger built on [NewLogHandler] adds them to every line logged with the
// record's context, by any code.
//
// A [Processor] is safe for concurrent use; its zero value processes one
// record at a time and logs with [slog.Default].
package batch

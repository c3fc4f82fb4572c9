// Command scheduled is an AWS Lambda function that EventBridge Scheduler
// (or an EventBridge scheduled rule) runs on a schedule, whose runs never
// overlap, and whose ticks each run the job at most once however often a
// tick is delivered.
//
// A schedule whose run can take longer than its interval piles up runs:
// Lambda starts the next tick in another execution environment while the
// previous run is still going. Two idempotency scopes prevent that.
//
//  1. The tick, keyed on the job and the scheduled time ("tick", a
//     function wrapper of [idempotency.WrapFunc]). A retry of the same tick
//     (Scheduler's, when it could not invoke the function; Lambda's, after
//     a failed asynchronous invocation; or a duplicate delivery) gets the
//     stored [Result]. The record lives 30 hours
//     (POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER overrides it): longer than
//     Scheduler retries a tick (24 hours at most, its default) plus the
//     time Lambda keeps an asynchronous event (6 hours at most, its
//     default), so that no retry of a tick outlives its record.
//  2. The job, a lock keyed on the job name alone ("lock"). While a run
//     holds it, its INPROGRESS record keeps every other tick of the job
//     out. A tick that finds the job held is skipped and logged (what
//     Kubernetes calls concurrencyPolicy: Forbid), and its result says so,
//     so that its own retries do not run the job later. With
//     POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS=true a tick waits
//     instead, until the run holding the lock ends, then runs: runs queue
//     one behind the other, a tick giving up (skipped) a second before its
//     own deadline. A duplicate of a tick that is running waits too, and
//     gets that run's result.
//
// # The lock is released, not completed
//
// When the job has run, the lock's function hands the run back inside an
// error, [finished], and the middleware deletes the lock's record as it
// does after any error, instead of storing it COMPLETED. A stored lock
// would be replayed to every tick until it expired: those ticks would be
// coalesced into the previous run, and a waiting tick would get that
// run's result instead of running. Its expiry cannot be short, either:
// [idempotency.WithExpiresAfter] also bounds how long an INPROGRESS
// record holds its key, so the lock's must outlast the longest run (the
// 1-second minimum would let a second run in a second into the first).
// With template.yaml's 10-minute timeout and 5-minute schedule, a
// COMPLETED lock would swallow at least the two ticks after every run.
// Released, the lock is free the moment a run ends; the tick's own record
// keeps the result.
//
// # A run that dies
//
// A run that Lambda stops at its timeout, or that crashes or runs out of
// memory, leaves both records INPROGRESS. POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY
// decides, for both scopes:
//
//   - retry (the default): both leases end at the dead invocation's
//     deadline. The next tick after it runs the job, and a retry of the
//     dead tick runs it again for that tick: right when a repeated run is
//     harmless, or the job service deduplicates by the Idempotency-Key.
//   - block: the lock is held until it expires (JOB_LOCK_EXPIRES_AFTER,
//     1 hour by default; it must exceed the function's timeout plus
//     [idempotency.AbandonGrace], which every invocation checks). Until
//     then every tick is skipped: "blocked", logged at error level, once
//     the run counts as abandoned ([idempotency.AbandonGrace] after its
//     deadline). The dead tick's retries get an
//     [*idempotency.AbandonedError] and end in the function's on-failure
//     destination. Nothing runs twice and nobody is asked; someone should
//     be alarmed.
//   - uncertain: from [idempotency.AbandonGrace] after the dead
//     invocation's deadline, the next tick takes the lock over and runs.
//     The lock guards no effect of its own: its reconcile function answers
//     that nothing happened under it. A retry of the dead tick reconciles
//     the tick: it asks the job service whether a run with the tick's key
//     exists (GET /runs/{key}) and returns that run, or runs the job once
//     when there is none.
//
// A request to the job service that got no answer is an uncertain outcome
// whatever the policy ([idempotency.Uncertain]): the tick's next retry
// reconciles it the same way. A retry of a dead tick may run after later
// ticks did: a job that catches up on whatever is pending takes that in
// its stride; one that needs its ticks in order needs block.
//
// The crash tests kill the function in the middle of a run under each
// policy; the end-to-end scenarios run ticks and their duplicates in two
// execution environments at once; both under the Lambda Runtime Interface
// Emulator, on moto.
//
// # The job service
//
// The job is a request to a service that does the work and answers when
// it is done: POST {JOB_SERVICE_URL}/runs with the tick's idempotency key
// as its Idempotency-Key header, and GET {JOB_SERVICE_URL}/runs/{key} to
// find a run again. The request is not cut at the invocation's deadline:
// Lambda stops the function then, and the abandon policy takes over.
//
// # Events
//
// template.yaml's schedule sends {"job": "...", "time":
// "<aws.scheduler.scheduled-time>"}, which Scheduler fills in with the
// tick's scheduled time, the same on every retry of the tick. An
// EventBridge scheduled rule's event works as it is: its "time" is the
// scheduled time, and JOB_NAME names the job. Times are read as RFC 3339
// and keyed in UTC, so that two spellings of one instant are one tick.
//
// # Environment
//
//	POWERTOOLS_IDEMPOTENCY_TABLE  the DynamoDB table of idempotency records (required)
//	JOB_SERVICE_URL               the job service's base URL (required)
//	JOB_NAME                      the job of events that name none
//	JOB_LOCK_EXPIRES_AFTER        how long the job lock can be held (Go duration, default 1h)
//
// plus the AWS SDK's own variables (AWS_REGION, credentials,
// AWS_ENDPOINT_URL_DYNAMODB for a local DynamoDB) and the middleware's
// POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY,
// POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS (both scopes) and
// POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER (the tick's record only).
package main

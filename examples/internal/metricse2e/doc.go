// Package metricse2e holds the end-to-end test of the idempotency
// middleware's metrics and outcome log: the payments example, built as
// Lambda runs it, under the Runtime Interface Emulator with
// POWERTOOLS_IDEMPOTENCY_METRICS and POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME
// on. Every embedded metric format document the function writes is checked
// against the specification's rules (package
// github.com/gopowertools/lambda/internal/testing/emftest).
package metricse2e

// Package sim is a deterministic simulator of the idempotency protocol:
// it runs the real engine (powertools/idempotency, built with
// idempotency.New and its public options), the real dynamo.Store, the
// real redis.Store with go-redis and its Lua scripts (run by gopher-lua
// on a modelled server), and the response store, unmodified, through
// seeded schedules of a modelled world, and judges each schedule by
// invariants computed from the function's options, the world's clock and
// the faults injected, never from what the code wrote.
//
// The world: Lambda sandboxes with clocks that disagree by up to a few
// seconds, invocations that crash at any step or time out, requests
// delivered by the rules of SQS, API Gateway clients and Lambda's
// asynchronous retries, a downstream service that counts the handler's
// effects, and a store: a DynamoDB table behind a model of its API
// (conditions, ALL_OLD, transactions and their ClientRequestToken, the
// item limit, lagging TTL, throttling, lost replies and the SDK's
// retries), a Redis primary and replica that fail over, reached by
// go-redis through in-process connections, or a DynamoDB global table
// with two Regions in either consistency mode.
//
// Determinism: one goroutine runs at a time. Each invocation runs in a
// goroutine of its own, and every step it takes into the world (a
// request, a wait) hands control back to a cooperative scheduler
// which runs the earliest pending event, in an order drawn
// from the seed when events coincide. The engine waits and reads the time
// left to a deadline through internal/simclock, which the invocation's
// context carries; its clock is WithClock's. So a seed replays its
// schedule exactly.
//
// Run it with go test (a fixed budget of seeds per store) or with
// cmd/simulate, which takes -seeds, -seed, -store and -v.
// docs/simulation.md in the repository describes the world, the
// invariants, the documented limits, the defects it is shown to catch,
// and what it found.
package sim

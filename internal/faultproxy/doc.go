// Package faultproxy is an HTTP proxy, for tests, that stands between the
// AWS SDK and a DynamoDB-compatible server (moto) and breaks some of the
// requests on purpose: the failures DynamoDB and the network produce on a
// bad day, chosen by the test per operation, per count or at a rate.
//
// The faults (see [Fault]):
//
//   - [Throttling] and [ProvisionedThroughputExceeded]: DynamoDB's JSON
//     error reply, status 400, with x-amzn-ErrorType and __type set as the
//     service sets them, so that the SDK's retryer classifies them as it
//     would in production. The server never sees the request.
//   - [InternalServerError]: status 500, DynamoDB's InternalServerError.
//     The server never sees the request.
//   - [Latency]: the request is held for Rule.Delay, then forwarded.
//   - [ResetBeforeServer]: the connection is reset (TCP RST) once the
//     request has been read, before it reaches the server.
//   - [ReplyLost]: the request is forwarded, the server applies it and
//     answers, and the proxy then resets the connection instead of passing
//     the answer on. The client cannot tell this from [ResetBeforeServer];
//     a retried conditional write then meets its own earlier write.
//
// A [Proxy] is safe for concurrent use; its rules can be changed while
// requests flow. It starts no goroutine of its own beyond the HTTP server
// that serves the test's requests, and [Proxy.Close] stops that.
package faultproxy

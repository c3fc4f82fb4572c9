// Package faultproxy is a proxy, for tests, that stands between a client
// and a server and breaks some of the requests on purpose: the failures
// the network and the service produce on a bad day, chosen by the test per
// operation, per count or at a rate. It speaks two protocols, and only
// their framing differs: the rules, the counters and the choice of the
// fault are one machine.
//
//   - [NewHTTP]: between the AWS SDK and a DynamoDB-compatible server
//     (moto), or any AWS service's HTTP endpoint. A request's operation is
//     named after the dot of its X-Amz-Target header.
//   - [NewRESP]: between a Redis client (go-redis) and a Redis or Valkey
//     server. The proxy reads the client's commands and the server's
//     replies as RESP (versions 2 and 3) values, so that it can pair each
//     command with its reply: the server answers the commands of one
//     connection in order. A connection that receives out-of-band pushes
//     (pub/sub, client tracking) would throw the pairing off; the store's
//     tests use neither. A command's operation is its name in upper case.
//
// The faults (see [Fault]):
//
//   - [Throttling] and [ProvisionedThroughputExceeded] (HTTP): DynamoDB's
//     JSON error reply, status 400, with x-amzn-ErrorType and __type set
//     as the service sets them, so that the SDK's retryer classifies them
//     as it would in production. The server never sees the request.
//   - [InternalServerError] (HTTP): status 500, DynamoDB's
//     InternalServerError. The server never sees the request.
//   - [Latency]: over HTTP, the request is held for Rule.Delay, then
//     forwarded; over RESP, the reply is held, so that the commands
//     pipelined behind it keep their order.
//   - [ResetBeforeServer]: the connection is reset (TCP RST) once the
//     request has been read, before it reaches the server.
//   - [ReplyLost]: the request is forwarded, the server applies it and
//     answers, and the proxy then resets the connection instead of passing
//     the answer on. The client cannot tell this from [ResetBeforeServer];
//     a retried conditional write then meets its own earlier write.
//
// A [Proxy] is safe for concurrent use; its rules can be changed while
// requests flow. Its goroutines are those that serve the test's
// connections (the HTTP server's, or two per RESP connection), and
// [Proxy.Close] stops them.
package faultproxy

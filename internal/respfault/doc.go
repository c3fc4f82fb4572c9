// Package respfault is a TCP proxy, for tests, that stands between a Redis
// client (go-redis) and a Redis or Valkey server and breaks some of the
// commands on purpose: the failures the network produces on a bad day,
// chosen by the test per command and per count. It is the RESP sibling of
// internal/faultproxy, which does the same for DynamoDB's HTTP.
//
// The proxy reads the client's commands and the server's replies as RESP
// (versions 2 and 3) values, so that it can pair each command with its
// reply: the server answers the commands of one connection in order. A
// connection that receives out-of-band pushes (pub/sub, client tracking)
// would throw the pairing off; the store's tests use neither.
//
// The faults (see [Fault]):
//
//   - [ResetBeforeServer]: the connection is reset (TCP RST) once the
//     command has been read, before it reaches the server.
//   - [ReplyLost]: the command is forwarded, the server applies it and
//     answers, and the proxy then resets the connection instead of passing
//     the answer on. The client cannot tell this from [ResetBeforeServer];
//     a retried conditional script then meets its own earlier write.
//   - [Latency]: the reply is held for Rule.Delay, then passed on.
//
// A [Proxy] is safe for concurrent use; its rules can be changed while
// commands flow. It runs two goroutines per client connection, and
// [Proxy.Close] stops them all.
package respfault

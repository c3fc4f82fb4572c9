// Package httpapi makes a Lambda handler behind an HTTP front end
// idempotent, and answers each outcome of the idempotency middleware with
// the HTTP status a client expects, following the IETF draft "The
// Idempotency-Key HTTP Header Field"
// (draft-ietf-httpapi-idempotency-key-header). The front ends are API
// Gateway REST APIs (v1 proxy events), HTTP APIs (payload format 2.0),
// Application Load Balancers and function URLs, with the event types of
// github.com/aws/aws-lambda-go/events (see [Request]).
//
// [Wrap] takes the handler, such as a
// func(context.Context, events.APIGatewayV2HTTPRequest)
// (events.APIGatewayV2HTTPResponse, error), and returns one of the same
// type for lambda.Start. It runs the handler under
// github.com/gopowertools/lambda/powertools/idempotency (configured with
// [WithOptions]). A first request gets the handler's response; a replay
// gets the stored response, with the header Idempotency-Replayed: true
// ([WithReplayedHeader]). Each error of the middleware gets the status,
// the headers (Retry-After where a retry has a time to wait) and the
// problem that the table of docs/errors.md gives it, as does a request
// whose Idempotency-Key header is ambiguous or malformed.
//
// Each error is matched with errors.As, so an error of the handler's that
// wraps one is answered the same way. Every error response the package
// writes is an RFC 9457 problem details document (Content-Type:
// application/problem+json) with type, title, status, detail and the
// extension member code, the problem's name (in-progress, key-reused...),
// for a client's program to branch on. The type is about:blank, with the
// status phrase as title, unless [WithProblemTypeBase] gives the base of
// your API's own type URIs; docs/http.md describes each problem. The
// detail never holds the key or the store's error.
//
// The handler's own errors are returned unchanged, after the middleware
// has released the key, and Lambda reports them (API Gateway then answers
// 502). An error made with idempotency.Uncertain is one of them: the key
// is kept UNCERTAIN, and its duplicates get the answer to an
// [*idempotency.UncertainError]. To answer an error of yours with a status
// of yours, wrap what Wrap returns; the example does. Configuration errors
// of the middleware are returned unchanged too.
//
// # Keys
//
// By default the key is what the middleware's key expression selects
// (idempotency.WithEventKey, or POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH),
// such as an order id in the body, as without this package.
//
// With [WithKeyHeader], the key is the Idempotency-Key header, read as the
// draft defines it (an RFC 8941 string, "8e03978e-..." in double quotes)
// or as a bare token, scoped to the request's method and path, and to its
// client with [WithClient]: the same key sent to another route, or by
// another client, is another request. Header names are matched ignoring
// case, since REST API and ALB events keep the client's spelling; a
// request that carries the header more than once, under two spellings,
// with a comma-joined list, or with a value that differs between
// headers and multiValueHeaders, gets 400 rather than a guess at which
// one was meant. Payload validation defaults to the body.
//
// The handler gets the request as lambda.Start decoded it; the middleware
// reads the request's JSON, as json.Marshal writes it, and the key header's
// scope beside it. So the middleware's decoding options
// (idempotency.WithUseNumber, idempotency.WithDisallowUnknownFields) have
// nothing to decode here: give lambda.Start its own.
//
// # Concurrency
//
// The returned handler is safe for concurrent use, as the middleware is.
// It keeps nothing between requests beyond what the middleware keeps.
package httpapi

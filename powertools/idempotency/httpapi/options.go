package httpapi

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/adapters"
)

// Option configures [New] and [Wrap]. Options are checked when the wrapper
// is built: a bad setting fails at cold start with an
// [*idempotency.ConfigError], never on a request. A nil Option is ignored.
type Option func(*config)

// config is what the options set.
type config struct {
	keyHeader   bool // key on the Idempotency-Key header
	keyRequired bool
	client      func(req any) string // nil: no client in the key
	clientType  reflect.Type         // the Req of WithClient's function
	replayed    string               // "" marks no replay
	typeBase    string               // of the problem type URIs
	idempotency []idempotency.Option
}

// defaultReplayedHeader is the header that marks a replayed response.
const defaultReplayedHeader = "Idempotency-Replayed"

// WithKeyHeader keys each request on its Idempotency-Key header, scoped to
// the request's method and path (and client, see [WithClient]), as
// draft-ietf-httpapi-idempotency-key-header describes. A request whose
// header is ambiguous or malformed gets 400 (see the package
// documentation). With required true, a request without the header gets
// 400; with false, it runs without idempotency, as a request without a
// key does in the middleware (which logs a warning).
//
// The key replaces any key expression, given with
// idempotency.WithEventKey or in POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH,
// and required replaces idempotency.WithKeyRequired. The payload
// validation expression defaults to "[body, isBase64Encoded]", the bytes
// the handler reads: a key reused with another body, or with the same
// text as base64 where it was not, gets 422.
// idempotency.WithPayloadValidation, or its environment variable,
// replaces it, and "" turns it off.
//
// Default: off: the key is what the middleware's key expression selects
// from the event, as without the adapter.
func WithKeyHeader(required bool) Option {
	return func(c *config) { c.keyHeader, c.keyRequired = true, required }
}

// WithClient puts into each request's key the client that sent it, as
// client returns it from the request: the principal your authorizer
// established, such as the subject of a JWT
// (req.RequestContext.Authorizer.JWT.Claims["sub"] on an HTTP API). Two
// clients that send the same Idempotency-Key then never meet each other's
// record: no 422 for the second, and no replay of the first one's
// response to it. client must read what AWS wrote (the authorizer's
// output), never a header the client chose. A request for which it
// returns "" shares the scope of every other such request.
//
// It requires [WithKeyHeader], and Req must be the wrapped handler's
// request type; otherwise building the wrapper fails.
//
// Default: none: the key is scoped to the method and the path only.
func WithClient[Req Request](client func(Req) string) Option {
	return func(c *config) {
		if client == nil {
			c.client, c.clientType = nil, nil
			return
		}
		c.clientType = reflect.TypeFor[Req]()
		c.client = func(req any) string { return client(req.(Req)) }
	}
}

// WithReplayedHeader sets the header added, with the value "true", to a
// response replayed from a record, so that a client (or a person reading
// its logs) can tell a retry that was answered from the one that acted. A
// header of that name already in the stored response, in any letter case,
// is replaced. "" adds none. The name must be an HTTP token.
//
// Default: Idempotency-Replayed.
func WithReplayedHeader(name string) Option {
	return func(c *config) { c.replayed = name }
}

// WithProblemTypeBase makes the type of each problem document the adapter
// writes base followed by the problem's code, such as
// https://api.example.com/problems/ and in-progress: a page of your API's
// documentation that says what the problem means and what the client
// should do (docs/http.md has a section to start from for each code). The
// title is then the problem's own, such as "A request with this
// idempotency key is outstanding". base must be an absolute URI.
//
// Default: about:blank, which RFC 9457 defines as a problem that means no
// more than its status code, with the status phrase ("Conflict") as its
// title, so that your API's answers send its clients to no page you have
// not written. Either way the document's extension member code holds the
// problem's code (in-progress, key-reused, missing-key, invalid-key,
// ambiguous-request, outcome-uncertain, response-not-stored,
// record-unreadable, store-unavailable), which does not change with the
// type, for a client's program to branch on.
func WithProblemTypeBase(base string) Option {
	return func(c *config) { c.typeBase = base }
}

// WithOptions passes opts to the idempotency middleware that the adapter
// builds (the key prefix, payload validation, expiry, local cache, and so
// on), with the environment variables it reads. Several WithOptions add up,
// in order.
//
// Default: none: the middleware's own defaults.
func WithOptions(opts ...idempotency.Option) Option {
	opts = append([]idempotency.Option(nil), opts...)
	return func(c *config) { c.idempotency = append(c.idempotency, opts...) }
}

// check validates c for a handler taking req.
func (c *config) check(req reflect.Type) error {
	if c.client != nil {
		if !c.keyHeader {
			return &idempotency.ConfigError{Name: "WithClient", Err: errors.New("it scopes the Idempotency-Key header: add WithKeyHeader")}
		}
		if c.clientType != req {
			return &idempotency.ConfigError{Name: "WithClient", Err: fmt.Errorf("its function takes %v, the handler %v", c.clientType, req)}
		}
	}
	if c.replayed != "" && !isToken(c.replayed) {
		return &idempotency.ConfigError{Name: "WithReplayedHeader", Err: fmt.Errorf("%q is not an HTTP field name", c.replayed)}
	}
	if err := checkTypeBase(c.typeBase); err != nil {
		return &idempotency.ConfigError{Name: "WithProblemTypeBase", Err: fmt.Errorf("%q: %w", c.typeBase, err)}
	}
	return nil
}

// bodyValidation is the default payload validation with the key header:
// the body and how the handler decodes it. Before, it was the body alone,
// formerBodyValidation, which isBase64Encoded flipped did not change
// although the bytes the handler reads differ; its records, a string's
// hash where the new ones are a list's, still match while they live.
const (
	bodyValidation       = "[body, isBase64Encoded]"
	formerBodyValidation = "body"
)

// middlewareOptions are the options of the middleware: with the header as
// the key, a default validation first (so that the user's default, the
// environment and the user's option all win over it), and the key last (so
// that it wins over the user's).
func (c *config) middlewareOptions() []idempotency.Option {
	if !c.keyHeader {
		return c.idempotency
	}
	former := adapters.FormerValidation(bodyValidation, formerBodyValidation).(idempotency.Option)
	opts := []idempotency.Option{idempotency.WithDefaults(idempotency.WithPayloadValidation(bodyValidation), former)}
	opts = append(opts, c.idempotency...)
	return append(opts, idempotency.WithEventKey(scopeMember), idempotency.WithKeyRequired(c.keyRequired))
}

// isToken reports whether s is an RFC 9110 token, as a field name must be.
func isToken(s string) bool {
	for i := range len(s) {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

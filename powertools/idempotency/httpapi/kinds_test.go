package httpapi_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/httpapi"
)

// The tests run every outcome on every event type. httpReq and httpResp
// are a request and a response of any type, and a kind converts them to
// and from its own events as its front end would build them.

type httpReq struct {
	method, path, body string
	base64             bool   // isBase64Encoded: the body is the bytes' base64
	client             string // the authorizer's principal
	headers            map[string]string
	multi              map[string][]string // a header sent several times
}

type httpResp struct {
	status      int
	description string // ALB's statusDescription
	headers     map[string]string
	multi       map[string][]string
	body        string
}

// header returns the value of the response header name, from whichever
// map holds it, and how many values it has.
func (r httpResp) header(name string) (string, int) {
	if v, ok := r.headers[name]; ok {
		return v, 1 + len(r.multi[name])
	}
	if v := r.multi[name]; len(v) > 0 {
		return v[0], len(v)
	}
	return "", 0
}

type handlerFunc func(context.Context, httpReq) (httpResp, error)

// kind is one event type.
type kind struct {
	name string
	// repeats says whether the event can show a header sent twice: an
	// ALB without multi-value headers passes one of the values only.
	repeats bool
	wrap    func(store idempotency.Store, h handlerFunc, opts ...httpapi.Option) (handlerFunc, error)
	// client is WithClient, reading the principal where the kind's
	// authorizer writes it.
	client httpapi.Option
	// reconcile is a WithReconcile that cannot tell.
	reconcile idempotency.Option
}

func newKind[Req httpapi.Request, Resp httpapi.Response](name string, repeats bool,
	toReq func(httpReq) Req, fromReq func(Req) httpReq,
	toResp func(httpResp) Resp, fromResp func(Resp) httpResp,
	client func(Req) string,
) kind {
	return kind{
		name:    name,
		repeats: repeats,
		wrap: func(store idempotency.Store, h handlerFunc, opts ...httpapi.Option) (handlerFunc, error) {
			fn := func(ctx context.Context, req Req) (Resp, error) {
				resp, err := h(ctx, fromReq(req))
				return toResp(resp), err
			}
			w, err := httpapi.New(store, fn, opts...)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, r httpReq) (httpResp, error) {
				resp, err := w(ctx, toReq(r))
				return fromResp(resp), err
			}, nil
		},
		client: httpapi.WithClient(client),
		reconcile: idempotency.WithReconcile(func(context.Context, string) (Resp, bool, error) {
			var zero Resp
			return zero, false, errors.New("the provider does not answer")
		}),
	}
}

// both returns the headers and multiValueHeaders of a REST API event: the
// client's spelling, the last value in headers and all in
// multiValueHeaders.
func both(r httpReq) (map[string]string, map[string][]string) {
	headers, multi := maps.Clone(r.headers), map[string][]string{}
	if headers == nil {
		headers = map[string]string{}
	}
	for k, v := range r.headers {
		multi[k] = []string{v}
	}
	for k, v := range r.multi {
		multi[k] = v
		headers[k] = v[len(v)-1]
	}
	return headers, multi
}

// joined returns the headers of an HTTP API or function URL event: a
// repeated header's values joined with commas.
func joined(r httpReq) map[string]string {
	headers := maps.Clone(r.headers)
	if headers == nil {
		headers = map[string]string{}
	}
	for k, v := range r.multi {
		headers[k] = strings.Join(v, ",")
	}
	return headers
}

var kinds = []kind{
	newKind("REST API", true,
		func(r httpReq) events.APIGatewayProxyRequest {
			headers, multi := both(r)
			return events.APIGatewayProxyRequest{
				Resource: r.path, Path: r.path, HTTPMethod: r.method, Headers: headers, MultiValueHeaders: multi, Body: r.body, IsBase64Encoded: r.base64,
				RequestContext: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"principalId": r.client}},
			}
		},
		func(req events.APIGatewayProxyRequest) httpReq {
			return httpReq{method: req.HTTPMethod, path: req.Path, body: req.Body, headers: req.Headers}
		},
		func(r httpResp) events.APIGatewayProxyResponse {
			return events.APIGatewayProxyResponse{StatusCode: r.status, Headers: r.headers, Body: r.body}
		},
		func(r events.APIGatewayProxyResponse) httpResp {
			return httpResp{status: r.StatusCode, headers: r.Headers, multi: r.MultiValueHeaders, body: r.Body}
		},
		func(req events.APIGatewayProxyRequest) string {
			p, _ := req.RequestContext.Authorizer["principalId"].(string)
			return p
		},
	),
	newKind("HTTP API", true,
		func(r httpReq) events.APIGatewayV2HTTPRequest {
			return events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: r.method + " " + r.path, RawPath: r.path, Headers: joined(r), Body: r.body, IsBase64Encoded: r.base64,
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.method, Path: r.path},
					Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
						JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": r.client}},
					},
				},
			}
		},
		func(req events.APIGatewayV2HTTPRequest) httpReq {
			return httpReq{method: req.RequestContext.HTTP.Method, path: req.RawPath, body: req.Body, headers: req.Headers}
		},
		func(r httpResp) events.APIGatewayV2HTTPResponse {
			return events.APIGatewayV2HTTPResponse{StatusCode: r.status, Headers: r.headers, Body: r.body}
		},
		func(r events.APIGatewayV2HTTPResponse) httpResp {
			return httpResp{status: r.StatusCode, headers: r.Headers, multi: r.MultiValueHeaders, body: r.Body}
		},
		func(req events.APIGatewayV2HTTPRequest) string {
			return req.RequestContext.Authorizer.JWT.Claims["sub"]
		},
	),
	newKind("ALB", false,
		func(r httpReq) events.ALBTargetGroupRequest {
			headers := maps.Clone(r.headers)
			if headers == nil {
				headers = map[string]string{}
			}
			for k, v := range r.multi {
				headers[k] = v[len(v)-1]
			}
			headers["x-amzn-oidc-identity"] = r.client
			return events.ALBTargetGroupRequest{HTTPMethod: r.method, Path: r.path, Headers: headers, Body: r.body, IsBase64Encoded: r.base64}
		},
		func(req events.ALBTargetGroupRequest) httpReq {
			return httpReq{method: req.HTTPMethod, path: req.Path, body: req.Body, headers: req.Headers}
		},
		func(r httpResp) events.ALBTargetGroupResponse {
			return events.ALBTargetGroupResponse{StatusCode: r.status, StatusDescription: "", Headers: r.headers, Body: r.body}
		},
		func(r events.ALBTargetGroupResponse) httpResp {
			return httpResp{status: r.StatusCode, description: r.StatusDescription, headers: r.Headers, multi: r.MultiValueHeaders, body: r.Body}
		},
		func(req events.ALBTargetGroupRequest) string { return req.Headers["x-amzn-oidc-identity"] },
	),
	newKind("ALB multi-value", true,
		func(r httpReq) events.ALBTargetGroupRequest {
			_, multi := both(r)
			multi["x-amzn-oidc-identity"] = []string{r.client}
			return events.ALBTargetGroupRequest{HTTPMethod: r.method, Path: r.path, MultiValueHeaders: multi, Body: r.body, IsBase64Encoded: r.base64}
		},
		func(req events.ALBTargetGroupRequest) httpReq {
			headers := map[string]string{}
			for k, v := range req.MultiValueHeaders {
				headers[k] = v[len(v)-1]
			}
			return httpReq{method: req.HTTPMethod, path: req.Path, body: req.Body, headers: headers}
		},
		func(r httpResp) events.ALBTargetGroupResponse {
			multi := map[string][]string{}
			for k, v := range r.headers {
				multi[k] = []string{v}
			}
			return events.ALBTargetGroupResponse{StatusCode: r.status, MultiValueHeaders: multi, Body: r.body}
		},
		func(r events.ALBTargetGroupResponse) httpResp {
			return httpResp{status: r.StatusCode, description: r.StatusDescription, headers: r.Headers, multi: r.MultiValueHeaders, body: r.Body}
		},
		func(req events.ALBTargetGroupRequest) string { return req.MultiValueHeaders["x-amzn-oidc-identity"][0] },
	),
	newKind("function URL", true,
		func(r httpReq) events.LambdaFunctionURLRequest {
			return events.LambdaFunctionURLRequest{
				Version: "2.0", RawPath: r.path, Headers: joined(r), Body: r.body, IsBase64Encoded: r.base64,
				RequestContext: events.LambdaFunctionURLRequestContext{
					HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: r.method, Path: r.path},
					Authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{
						IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserID: r.client},
					},
				},
			}
		},
		func(req events.LambdaFunctionURLRequest) httpReq {
			return httpReq{method: req.RequestContext.HTTP.Method, path: req.RawPath, body: req.Body, headers: req.Headers}
		},
		func(r httpResp) events.LambdaFunctionURLResponse {
			return events.LambdaFunctionURLResponse{StatusCode: r.status, Headers: r.headers, Body: r.body}
		},
		func(r events.LambdaFunctionURLResponse) httpResp {
			return httpResp{status: r.StatusCode, headers: r.Headers, body: r.Body}
		},
		func(req events.LambdaFunctionURLRequest) string { return req.RequestContext.Authorizer.IAM.UserID },
	),
}

// created is the handler's answer to a first request.
func created(body string) httpResp {
	return httpResp{status: http.StatusCreated, headers: map[string]string{"Content-Type": "application/json"}, body: body}
}

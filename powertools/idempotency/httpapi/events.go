package httpapi

import (
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// Request is the request event of an HTTP front end of Lambda: API Gateway
// REST API (v1 proxy), HTTP API (payload format 2.0), an Application Load
// Balancer target group, or a function URL.
type Request interface {
	events.APIGatewayProxyRequest | events.APIGatewayV2HTTPRequest |
		events.ALBTargetGroupRequest | events.LambdaFunctionURLRequest
}

// Response is the response of the same front ends. A handler returns the
// one that goes with its [Request]: [New] refuses another pairing.
type Response interface {
	events.APIGatewayProxyResponse | events.APIGatewayV2HTTPResponse |
		events.ALBTargetGroupResponse | events.LambdaFunctionURLResponse
}

// responseOf is the response type of each request type.
var responseOf = map[reflect.Type]reflect.Type{
	reflect.TypeFor[events.APIGatewayProxyRequest]():   reflect.TypeFor[events.APIGatewayProxyResponse](),
	reflect.TypeFor[events.APIGatewayV2HTTPRequest]():  reflect.TypeFor[events.APIGatewayV2HTTPResponse](),
	reflect.TypeFor[events.ALBTargetGroupRequest]():    reflect.TypeFor[events.ALBTargetGroupResponse](),
	reflect.TypeFor[events.LambdaFunctionURLRequest](): reflect.TypeFor[events.LambdaFunctionURLResponse](),
}

// request is what the adapter reads of a request event.
type request struct {
	method, path string
	headers      map[string]string
	multi        map[string][]string // REST API and ALB only
	// multiReply is set for an ALB target group with multi-value headers
	// on: its requests carry multiValueHeaders only, and its responses
	// must use them too.
	multiReply bool
}

// view reads req, one of the [Request] types.
func view(req any) request {
	switch r := req.(type) {
	case events.APIGatewayProxyRequest:
		return request{method: r.HTTPMethod, path: r.Path, headers: r.Headers, multi: r.MultiValueHeaders}
	case events.APIGatewayV2HTTPRequest:
		return request{method: r.RequestContext.HTTP.Method, path: r.RawPath, headers: r.Headers}
	case events.ALBTargetGroupRequest:
		return request{method: r.HTTPMethod, path: r.Path, headers: r.Headers, multi: r.MultiValueHeaders, multiReply: r.MultiValueHeaders != nil}
	case events.LambdaFunctionURLRequest:
		return request{method: r.RequestContext.HTTP.Method, path: r.RawPath, headers: r.Headers}
	}
	panic(fmt.Sprintf("httpapi: %T is not a Request", req)) // excluded by the type constraint
}

// respond returns p as a Resp, for the request r.
func respond[Resp Response](r request, p problem) Resp {
	headers := map[string]string{"Content-Type": problemType}
	if p.retryAfter > 0 {
		headers["Retry-After"] = strconv.Itoa(p.retryAfter)
	}
	body := p.encode()
	var resp any
	switch any(*new(Resp)).(type) {
	case events.APIGatewayProxyResponse:
		resp = events.APIGatewayProxyResponse{StatusCode: p.Status, Headers: headers, Body: body}
	case events.APIGatewayV2HTTPResponse:
		resp = events.APIGatewayV2HTTPResponse{StatusCode: p.Status, Headers: headers, Body: body}
	case events.ALBTargetGroupResponse:
		alb := events.ALBTargetGroupResponse{StatusCode: p.Status, StatusDescription: statusLine(p.Status), Body: body}
		if r.multiReply {
			alb.MultiValueHeaders = make(map[string][]string, len(headers))
			for k, v := range headers {
				alb.MultiValueHeaders[k] = []string{v}
			}
		} else {
			alb.Headers = headers
		}
		resp = alb
	case events.LambdaFunctionURLResponse:
		resp = events.LambdaFunctionURLResponse{StatusCode: p.Status, Headers: headers, Body: body}
	}
	return resp.(Resp)
}

// statusLine is an ALB response's statusDescription: "409 Conflict".
func statusLine(status int) string {
	return strconv.Itoa(status) + " " + http.StatusText(status)
}

// markReplayed returns resp, a response decoded from a record (its maps
// are its own), with the header name set to "true".
func markReplayed[Resp Response](resp Resp, r request, name string) Resp {
	var out any
	switch v := any(resp).(type) {
	case events.APIGatewayProxyResponse:
		v.Headers = setHeader(v.Headers, name)
		out = v
	case events.APIGatewayV2HTTPResponse:
		v.Headers = setHeader(v.Headers, name)
		out = v
	case events.ALBTargetGroupResponse:
		if r.multiReply {
			v.MultiValueHeaders = setMultiHeader(v.MultiValueHeaders, name)
		} else {
			v.Headers = setHeader(v.Headers, name)
		}
		out = v
	case events.LambdaFunctionURLResponse:
		v.Headers = setHeader(v.Headers, name)
		out = v
	}
	return out.(Resp)
}

// setHeader sets name to "true" in h, replacing any other spelling of it.
func setHeader(h map[string]string, name string) map[string]string {
	if h == nil {
		h = make(map[string]string, 1)
	}
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
	h[name] = "true"
	return h
}

// setMultiHeader is setHeader for multi-value headers.
func setMultiHeader(h map[string][]string, name string) map[string][]string {
	if h == nil {
		h = make(map[string][]string, 1)
	}
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
	h[name] = []string{"true"}
	return h
}

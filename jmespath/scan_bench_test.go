package jmespath

import "testing"

// httpAPIEvent is the ~2.2 KB API Gateway HTTP API (v2) event of the
// idempotency middleware's benchmark (powertools/idempotency/testdata), the
// shape SearchJSON is tuned for: indented, mostly short strings, the key in
// a JSON string body near the end.
var httpAPIEvent = []byte(`{
  "version": "2.0",
  "routeKey": "POST /orders",
  "rawPath": "/prod/orders",
  "rawQueryString": "source=web&campaign=spring",
  "cookies": ["session=6d1a0c2e9b7f4a3d8e5c1b0a9f8e7d6c", "theme=dark"],
  "headers": {
    "accept": "application/json",
    "accept-encoding": "gzip, deflate, br",
    "accept-language": "en-GB,en;q=0.9",
    "content-length": "152",
    "content-type": "application/json",
    "host": "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com",
    "user-agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "x-amzn-trace-id": "Root=1-65f1c2d3-4e5f6a7b8c9d0e1f2a3b4c5d",
    "x-forwarded-for": "203.0.113.42",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https",
    "x-request-id": "3f6c1e2a-9b8d-4c7e-a5f4-1d2c3b4a5e6f"
  },
  "queryStringParameters": {"source": "web", "campaign": "spring"},
  "requestContext": {
    "accountId": "123456789012",
    "apiId": "a1b2c3d4e5",
    "authorizer": {
      "jwt": {
        "claims": {
          "sub": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
          "iss": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Ab12Cd34E",
          "aud": "4k1l2m3n4o5p6q7r8s9t0u1v2w",
          "email": "alice@example.com",
          "scope": "orders/write orders/read"
        },
        "scopes": ["orders/write", "orders/read"]
      }
    },
    "domainName": "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com",
    "domainPrefix": "a1b2c3d4e5",
    "http": {
      "method": "POST",
      "path": "/prod/orders",
      "protocol": "HTTP/1.1",
      "sourceIp": "203.0.113.42",
      "userAgent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15"
    },
    "requestId": "JKJaXmPLvHcESHA=",
    "routeKey": "POST /orders",
    "stage": "prod",
    "time": "12/Mar/2026:19:03:58 +0000",
    "timeEpoch": 1773342238000
  },
  "pathParameters": {},
  "stageVariables": {"env": "prod"},
  "body": "{\"order_id\":\"ord-000000000000\",\"customer_id\":\"cus_8f3a2b1c\",\"amount\":4200,\"currency\":\"EUR\",\"items\":[{\"sku\":\"SKU-1\",\"qty\":2},{\"sku\":\"SKU-7\",\"qty\":1}]}",
  "isBase64Encoded": false
}
`)

// BenchmarkScanHTTPAPIEvent is the middleware's key search on its benchmark
// event.
func BenchmarkScanHTTPAPIEvent(b *testing.B) {
	for _, expr := range []string{"powertools_json(body).order_id", "requestContext.requestId", "missing"} {
		e := MustCompile(expr)
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(httpAPIEvent)))
			for b.Loop() {
				if _, err := e.SearchJSON(httpAPIEvent); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// compactBody is the body string of httpAPIEvent, quoted, as it is in the
// event: a compact JSON document whose quotes are all escaped.
var compactBody = []byte(`"{\"order_id\":\"ord-000000000000\",\"customer_id\":\"cus_8f3a2b1c\",\"amount\":4200,\"currency\":\"EUR\",\"items\":[{\"sku\":\"SKU-1\",\"qty\":2},{\"sku\":\"SKU-7\",\"qty\":1}]}"`)

// BenchmarkPowertoolsJSONStep is the two halves of a powertools_json step
// on compactBody, decoding the string and scanning the document in it, and
// the quoted scan that does both in one.
func BenchmarkPowertoolsJSONStep(b *testing.B) {
	b.Run("appendString", func(b *testing.B) {
		var buf [512]byte
		for b.Loop() {
			if _, end := appendString(buf[:0], compactBody, 1); end != len(compactBody) {
				b.Fatal(end)
			}
		}
	})
	b.Run("findQuoted", func(b *testing.B) {
		steps := MustCompile("order_id").path
		for b.Loop() {
			if _, _, ok := findQuoted(compactBody, 1, steps); !ok {
				b.Fatal("gave up")
			}
		}
	})
	b.Run("scanDoc", func(b *testing.B) {
		doc := []byte(mustUnquote(b, compactBody[1:]))
		steps := MustCompile("order_id").path
		for b.Loop() {
			if _, ok := scanDoc(doc, steps); !ok {
				b.Fatal("not found")
			}
		}
	})
}

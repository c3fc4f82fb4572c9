package faultproxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
)

// A test puts the proxy in front of its server and points the SDK at
// p.URL(). Here a plain HTTP client stands in for the SDK: the first
// PutItem is throttled, the second goes through.
func Example() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "{}")
	}))
	defer server.Close()

	p, err := faultproxy.NewHTTP(server.URL)
	if err != nil {
		panic(err)
	}
	defer p.Close()
	p.Set(faultproxy.Rule{Fault: faultproxy.Throttling, Op: "PutItem", Times: 1})

	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, p.URL(), strings.NewReader("{}"))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("X-Amzn-Errortype") != "")
	}
	c := p.Counts()
	fmt.Println("requests:", c.Requests["PutItem"], "forwarded:", c.Forwarded["PutItem"], "throttled:", c.InjectedFault(faultproxy.Throttling))
	// Output:
	// 400 true
	// 200 false
	// requests: 2 forwarded: 1 throttled: 1
}

package faultproxy

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// DynamoDB's error replies, in its JSON protocol (awsJson1_0): the status,
// the error type in the x-amzn-ErrorType header and in the body's __type,
// and a message. The SDK reads the code from either and classifies the
// throttling codes and any 5xx as retryable.
var errorReplies = map[Fault]struct {
	status  int
	typ     string
	message string
}{
	Throttling: {http.StatusBadRequest, "com.amazon.coral.availability#ThrottlingException",
		"Rate of requests exceeds the allowed throughput."},
	ProvisionedThroughputExceeded: {http.StatusBadRequest, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
		"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."},
	InternalServerError: {http.StatusInternalServerError, "com.amazonaws.dynamodb.v20120810#InternalServerError",
		"Internal server error"},
}

var requestIDs atomic.Uint64

func writeError(w http.ResponseWriter, f Fault) {
	e := errorReplies[f]
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("x-amzn-ErrorType", e.typ)
	h.Set("x-amzn-RequestId", fmt.Sprintf("FAULTPROXY%016d", requestIDs.Add(1)))
	w.WriteHeader(e.status)
	fmt.Fprintf(w, `{"__type":%q,"message":%q}`, e.typ, e.message)
}

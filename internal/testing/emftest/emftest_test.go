package emftest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/emftest"
)

// now is when the documents below were written: the specification's
// example's timestamp.
var now = time.UnixMilli(1574109732004)

// doc is a valid document with aws as its _aws member and rest after it.
func doc(aws, rest string) string {
	return `{"_aws":` + aws + `,"functionVersion":"$LATEST","time":100,"requestId":"989ffbf8"` + rest + `}`
}

// meta is an _aws member with one directive made of directive's members.
func meta(directive string) string {
	return `{"Timestamp":1574109732004,"CloudWatchMetrics":[{` + directive + `}]}`
}

const (
	namespace  = `"Namespace":"lambda-function-metrics"`
	dimensions = `"Dimensions":[["functionVersion"]]`
	metrics    = `"Metrics":[{"Name":"time","Unit":"Milliseconds","StorageResolution":60}]`
)

// valid is the specification's example.
var valid = doc(meta(namespace+","+dimensions+","+metrics), "")

func TestValidateAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, doc string }{
		{"the specification's example", valid},
		{"no unit, no resolution", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"time"}]`), "")},
		{"an empty dimension set", doc(meta(namespace+`,"Dimensions":[[]],`+metrics), "")},
		{"an array of values", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"times","Unit":"Count"}]`), `,"times":[1,2.5,-3e2]`)},
		{"no directives", doc(`{"Timestamp":1574109732004,"CloudWatchMetrics":[]}`, "")},
		{"two hours ahead", doc(`{"Timestamp":1574116932004,"CloudWatchMetrics":[]}`, "")},
		{"nine dimensions", doc(meta(namespace+`,"Dimensions":[["d1","d2","d3","d4","d5","d6","d7","d8","d9"]],`+metrics), dims(9))},
		{"a namespace with every allowed character", doc(meta(`"Namespace":"My App/v1.2_x-y#z:w",`+dimensions+","+metrics), "")},
		{"100 metrics", doc(meta(namespace+","+dimensions+`,"Metrics":[`+defs(100)+`]`), values(100))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := emftest.Validate([]byte(tc.doc), now); err != nil {
				t.Errorf("Validate(%s) = %v, want nil", tc.doc, err)
			}
		})
	}
}

// TestValidateRefuses gives documents that each break one rule.
func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, doc string }{
		{"not JSON", `{"_aws":`},
		{"not an object", `[` + valid + `]`},
		{"data after the object", valid + `{}`},
		{"a name twice", doc(meta(namespace+","+dimensions+","+metrics), `,"time":100`)},
		{"a name twice in _aws", doc(`{"Timestamp":1574109732004,"Timestamp":1574109732004,"CloudWatchMetrics":[]}`, "")},
		{"no _aws", `{"time":100}`},
		{"_aws not an object", `{"_aws":[]}`},
		{"an unknown member of _aws", doc(`{"Timestamp":1574109732004,"CloudWatchMetrics":[],"LogGroupName":"x"}`, "")},
		{"no timestamp", doc(`{"CloudWatchMetrics":[]}`, "")},
		{"a timestamp in seconds", doc(`{"Timestamp":1574109732,"CloudWatchMetrics":[]}`, "")},
		{"a timestamp in microseconds", doc(`{"Timestamp":1574109732004000,"CloudWatchMetrics":[]}`, "")},
		{"a fractional timestamp", doc(`{"Timestamp":1574109732004.5,"CloudWatchMetrics":[]}`, "")},
		{"a timestamp as a string", doc(`{"Timestamp":"1574109732004","CloudWatchMetrics":[]}`, "")},
		{"a timestamp over two weeks old", doc(`{"Timestamp":1572900000000,"CloudWatchMetrics":[]}`, "")},
		{"a timestamp over two hours ahead", doc(`{"Timestamp":1574116932005,"CloudWatchMetrics":[]}`, "")},
		{"no directives array", doc(`{"Timestamp":1574109732004}`, "")},
		{"a directive not an object", doc(`{"Timestamp":1574109732004,"CloudWatchMetrics":[1]}`, "")},
		{"an unknown member of a directive", doc(meta(namespace+","+dimensions+","+metrics+`,"Unit":"Count"`), "")},
		{"no namespace", doc(meta(dimensions+","+metrics), "")},
		{"an empty namespace", doc(meta(`"Namespace":"",`+dimensions+","+metrics), "")},
		{"a blank namespace", doc(meta(`"Namespace":"  ",`+dimensions+","+metrics), "")},
		{"a namespace of 256 characters", doc(meta(`"Namespace":"`+strings.Repeat("n", 256)+`",`+dimensions+","+metrics), "")},
		{"a namespace with a comma", doc(meta(`"Namespace":"a,b",`+dimensions+","+metrics), "")},
		{"a namespace of AWS", doc(meta(`"Namespace":"AWS/Lambda",`+dimensions+","+metrics), "")},
		{"no dimensions", doc(meta(namespace+","+metrics), "")},
		{"no dimension set", doc(meta(namespace+`,"Dimensions":[],`+metrics), "")},
		{"a flat dimension set", doc(meta(namespace+`,"Dimensions":["functionVersion"],`+metrics), "")},
		{"ten dimensions", doc(meta(namespace+`,"Dimensions":[["d1","d2","d3","d4","d5","d6","d7","d8","d9","d10"]],`+metrics), dims(10))},
		{"a dimension twice", doc(meta(namespace+`,"Dimensions":[["functionVersion","functionVersion"]],`+metrics), "")},
		{"a dimension with no member", doc(meta(namespace+`,"Dimensions":[["version"]],`+metrics), "")},
		{"a dimension with a number", doc(meta(namespace+`,"Dimensions":[["time"]],`+metrics), "")},
		{"a dimension with an empty value", doc(meta(namespace+`,"Dimensions":[["empty"]],`+metrics), `,"empty":""`)},
		{"a dimension value of 1,025 characters", doc(meta(namespace+`,"Dimensions":[["long"]],`+metrics), `,"long":"`+strings.Repeat("v", 1025)+`"`)},
		{"a dimension name of 251 characters", doc(meta(namespace+`,"Dimensions":[["`+strings.Repeat("d", 251)+`"]],`+metrics), `,"`+strings.Repeat("d", 251)+`":"v"`)},
		{"a dimension name starting with a colon", doc(meta(namespace+`,"Dimensions":[[":d"]],`+metrics), `,":d":"v"`)},
		{"a dimension name not ASCII", doc(meta(namespace+`,"Dimensions":[["dé"]],`+metrics), `,"dé":"v"`)},
		{"no metrics", doc(meta(namespace+","+dimensions), "")},
		{"101 metrics", doc(meta(namespace+","+dimensions+`,"Metrics":[`+defs(101)+`]`), values(101))},
		{"a metric not an object", doc(meta(namespace+","+dimensions+`,"Metrics":["time"]`), "")},
		{"a metric with no name", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Unit":"Count"}]`), "")},
		{"a metric with an empty name", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":""}]`), `,"":1`)},
		{"a metric name of 256 characters", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"`+strings.Repeat("m", 256)+`"}]`), `,"`+strings.Repeat("m", 256)+`":1`)},
		{"a metric with no member", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"latency"}]`), "")},
		{"a metric member nested", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"a.b"}]`), `,"a":{"b":1}`)},
		{"a metric with a string", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"requestId"}]`), "")},
		{"a metric with a boolean", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"ok"}]`), `,"ok":true`)},
		{"a metric with no values", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"none"}]`), `,"none":[]`)},
		{"a metric with a string among values", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"mixed"}]`), `,"mixed":[1,"2"]`)},
		{"a metric with 101 values", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"many"}]`), `,"many":[`+strings.Repeat("1,", 100)+`1]`)},
		{"a metric value out of range", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"huge"}]`), `,"huge":1e400`)},
		{"a unit in lower case", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"time","Unit":"milliseconds"}]`), "")},
		{"a unit not CloudWatch's", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"time","Unit":"Minutes"}]`), "")},
		{"a unit as a number", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"time","Unit":1}]`), "")},
		{"a resolution of 30", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"time","StorageResolution":30}]`), "")},
		{"an unknown member of a metric", doc(meta(namespace+","+dimensions+`,"Metrics":[{"Name":"time","Value":100}]`), "")},
		{"over 256 KB", doc(meta(namespace+","+dimensions+","+metrics), `,"padding":"`+strings.Repeat("p", emftest.MaxDocumentSize)+`"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := emftest.Validate([]byte(tc.doc), now); err == nil {
				t.Errorf("Validate(%.300s) = nil, want an error", tc.doc)
			}
		})
	}
}

func TestDocuments(t *testing.T) {
	t.Parallel()
	output := "START RequestId: 1\n" +
		`{"level":"INFO","msg":"charging"}` + "\n" +
		valid + "\r\n" +
		`{"_aws":` + "\n" +
		"END RequestId: 1\n" +
		valid
	docs := emftest.Documents([]byte(output))
	if len(docs) != 3 || string(docs[0]) != valid || string(docs[1]) != `{"_aws":` || string(docs[2]) != valid {
		t.Errorf("Documents = %q, want the two valid documents around the broken one", docs)
	}
}

// dims is n dimension members d1...dn.
func dims(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `,"d%d":"v"`, i)
	}
	return b.String()
}

// defs and values are n metric definitions m1...mn and their members.
func defs(n int) string {
	var d []string
	for i := 1; i <= n; i++ {
		d = append(d, fmt.Sprintf(`{"Name":"m%d","Unit":"Count"}`, i))
	}
	return strings.Join(d, ",")
}

func values(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `,"m%d":%d`, i, i)
	}
	return b.String()
}

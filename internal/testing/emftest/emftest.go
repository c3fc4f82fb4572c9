// Package emftest checks CloudWatch embedded metric format (EMF)
// documents, the JSON log lines from which CloudWatch Logs extracts
// metrics, for the tests of code that writes them (package emf's Writer).
//
// [Validate] applies the rules of the specification,
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html,
// and the limits of CloudWatch's PutMetricData, which the extracted metrics
// must meet. Where the specification's revisions differ (9 dimensions per
// set, later 30; 256 KB per document, later 1 MB) or the specification's
// schema is looser than the API (names of 1,024 characters, where the API
// takes 255), the stricter limit applies: a document that passes here is
// accepted by the old rules and the new.
package emftest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The limits that Validate applies.
const (
	// MaxDocumentSize is a CloudWatch Logs event's size limit, in the
	// revision of the specification that set it at 256 KB.
	MaxDocumentSize = 256 * 1024
	// MaxMetrics is the number of metric definitions a directive may have.
	MaxMetrics = 100
	// MaxValues is the number of values an array metric member may hold.
	MaxValues = 100
	// MaxDimensions is the number of dimensions a dimension set may have:
	// 30 since 2022, 9 before, and 9 in the schema of Powertools for AWS
	// Lambda (Python).
	MaxDimensions = 9
	// MaxPast and MaxFuture bound a document's timestamp around the time
	// it is written: CloudWatch refuses metric data older than two weeks
	// or more than two hours in the future.
	MaxPast   = 14 * 24 * time.Hour
	MaxFuture = 2 * time.Hour
)

// units are the units CloudWatch accepts (MetricDatum.Unit).
var units = map[string]bool{
	"Seconds": true, "Microseconds": true, "Milliseconds": true,
	"Bytes": true, "Kilobytes": true, "Megabytes": true, "Gigabytes": true, "Terabytes": true,
	"Bits": true, "Kilobits": true, "Megabits": true, "Gigabits": true, "Terabits": true,
	"Percent": true, "Count": true,
	"Bytes/Second": true, "Kilobytes/Second": true, "Megabytes/Second": true, "Gigabytes/Second": true, "Terabytes/Second": true,
	"Bits/Second": true, "Kilobits/Second": true, "Megabits/Second": true, "Gigabits/Second": true, "Terabits/Second": true,
	"Count/Second": true, "None": true,
}

// Validate reports every way in which doc, one log line without its
// newline, breaks the rules, joined in one error; nil if it breaks none.
// now is when the document was written: its Timestamp must lie within
// [MaxPast] before it and [MaxFuture] after.
//
// The rules: doc is one JSON object, with no name twice in any object,
// of at most [MaxDocumentSize] bytes. Its "_aws" member is an object with
// exactly "Timestamp", an integer count of milliseconds since the Unix
// epoch, and "CloudWatchMetrics", an array of directives. A directive has
// exactly "Namespace", "Dimensions" and "Metrics". The namespace is 1 to
// 255 characters among letters, digits, space and . - _ / # :, and does not
// start with "AWS/". Dimensions is a non-empty array of dimension sets, each
// of at most [MaxDimensions] distinct names of 1 to 250 printable ASCII
// characters, not starting with ':'; each names a member of the root whose
// value is a string of 1 to 1,024 characters, not all white space. Metrics
// is an array of at most [MaxMetrics] definitions, each with a "Name" of 1
// to 255 characters that names a member of the root holding a number or an
// array of 1 to [MaxValues] numbers, an optional "Unit" among CloudWatch's
// units, an optional "StorageResolution" of 1 or 60, and nothing else.
func Validate(doc []byte, now time.Time) error {
	v := &validation{}
	if len(doc) > MaxDocumentSize {
		v.add("the document is %d bytes, over %d", len(doc), MaxDocumentSize)
	}
	root, err := decode(doc)
	if err != nil {
		v.add("%v", err)
		return v.err()
	}
	obj, ok := root.(map[string]any)
	if !ok {
		v.add("the document is not a JSON object")
		return v.err()
	}
	meta, ok := obj["_aws"].(map[string]any)
	if !ok {
		v.add(`"_aws" is missing or not an object`)
		return v.err()
	}
	v.only("_aws", meta, "Timestamp", "CloudWatchMetrics")
	v.timestamp(meta["Timestamp"], now)
	directives, ok := meta["CloudWatchMetrics"].([]any)
	if !ok {
		v.add(`"_aws.CloudWatchMetrics" is missing or not an array`)
		return v.err()
	}
	for i, d := range directives {
		v.directive(fmt.Sprintf("_aws.CloudWatchMetrics[%d]", i), d, obj)
	}
	return v.err()
}

// Documents returns the lines of output, a function's log, that are meant
// as EMF documents: those that mention an "_aws" member. A line that does
// and is broken is returned too, so that Validate reports it.
func Documents(output []byte) [][]byte {
	var docs [][]byte
	for line := range bytes.Lines(output) {
		line = bytes.TrimRight(line, "\r\n")
		if bytes.Contains(line, []byte(`"_aws"`)) {
			docs = append(docs, line)
		}
	}
	return docs
}

// validation collects a document's problems.
type validation struct{ problems []error }

func (v *validation) add(format string, args ...any) {
	v.problems = append(v.problems, fmt.Errorf(format, args...))
}

func (v *validation) err() error { return errors.Join(v.problems...) }

// only reports the members of obj other than names: the specification's
// objects "MUST NOT contain any additional members". A required member that
// is missing is reported by the check of its value.
func (v *validation) only(path string, obj map[string]any, names ...string) {
	for k := range obj {
		if !contains(names, k) {
			v.add("%s has a member %q that the specification does not define", path, k)
		}
	}
}

func (v *validation) timestamp(ts any, now time.Time) {
	n, ok := ts.(json.Number)
	if !ok {
		v.add(`"_aws.Timestamp" is missing or not a number`)
		return
	}
	ms, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		v.add(`"_aws.Timestamp" %s is not an integer count of milliseconds`, n)
		return
	}
	at := time.UnixMilli(ms)
	if at.Before(now.Add(-MaxPast)) || at.After(now.Add(MaxFuture)) {
		v.add(`"_aws.Timestamp" %d is %v, not within %v before and %v after %v: not milliseconds, or a wrong clock`, ms, at.UTC(), MaxPast, MaxFuture, now.UTC())
	}
}

func (v *validation) directive(path string, d any, root map[string]any) {
	obj, ok := d.(map[string]any)
	if !ok {
		v.add("%s is not an object", path)
		return
	}
	v.only(path, obj, "Namespace", "Dimensions", "Metrics")
	v.namespace(path+".Namespace", obj["Namespace"])
	if sets, ok := obj["Dimensions"].([]any); !ok || len(sets) == 0 {
		v.add("%s.Dimensions is missing or not a non-empty array", path)
	} else {
		for i, set := range sets {
			v.dimensionSet(fmt.Sprintf("%s.Dimensions[%d]", path, i), set, root)
		}
	}
	metrics, ok := obj["Metrics"].([]any)
	if !ok {
		v.add("%s.Metrics is missing or not an array", path)
		return
	}
	if len(metrics) > MaxMetrics {
		v.add("%s.Metrics has %d definitions, over %d", path, len(metrics), MaxMetrics)
	}
	for i, m := range metrics {
		v.metric(fmt.Sprintf("%s.Metrics[%d]", path, i), m, root)
	}
}

func (v *validation) namespace(path string, ns any) {
	s, ok := ns.(string)
	switch {
	case !ok:
		v.add("%s is missing or not a string", path)
	case s == "" || utf8.RuneCountInString(s) > 255:
		v.add("%s %q is not 1 to 255 characters", path, s)
	case strings.TrimLeft(s, namespaceChars) != "":
		v.add("%s %q has characters other than letters, digits, space and . - _ / # :", path, s)
	case strings.TrimSpace(s) == "":
		v.add("%s is only white space", path)
	case strings.HasPrefix(s, "AWS/"):
		v.add("%s %q starts with AWS/, which is reserved for AWS services", path, s)
	}
}

const namespaceChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-/#:"

func (v *validation) dimensionSet(path string, set any, root map[string]any) {
	names, ok := set.([]any)
	if !ok {
		v.add("%s is not an array", path)
		return
	}
	if len(names) > MaxDimensions {
		v.add("%s has %d dimensions, over %d", path, len(names), MaxDimensions)
	}
	seen := map[string]bool{}
	for i, n := range names {
		name, ok := n.(string)
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case !ok:
			v.add("%s is not a string", p)
			continue
		case name == "" || len(name) > 250 || !printableASCII(name):
			v.add("%s %q is not 1 to 250 printable ASCII characters", p, name)
		case strings.HasPrefix(name, ":"):
			v.add("%s %q starts with ':'", p, name)
		case seen[name]:
			v.add("%s %q is in the set twice", p, name)
		}
		seen[name] = true
		value, ok := root[name].(string)
		switch {
		case !ok:
			v.add("%s names %q, which is not a string member of the root", p, name)
		case strings.TrimSpace(value) == "" || utf8.RuneCountInString(value) > 1024:
			v.add("%s: the value of %q is not 1 to 1,024 characters with one not white space", p, name)
		}
	}
}

func (v *validation) metric(path string, m any, root map[string]any) {
	def, ok := m.(map[string]any)
	if !ok {
		v.add("%s is not an object", path)
		return
	}
	v.only(path, def, "Name", "Unit", "StorageResolution")
	name, ok := def["Name"].(string)
	if !ok || name == "" || utf8.RuneCountInString(name) > 255 {
		v.add("%s.Name is missing or not a string of 1 to 255 characters", path)
		return
	}
	if u, set := def["Unit"]; set {
		if s, ok := u.(string); !ok || !units[s] {
			v.add("%s.Unit %v is not a CloudWatch unit", path, u)
		}
	}
	if r, set := def["StorageResolution"]; set {
		if n, ok := r.(json.Number); !ok || (n != "1" && n != "60") {
			v.add("%s.StorageResolution %v is not 1 or 60", path, r)
		}
	}
	switch value := root[name].(type) {
	case json.Number:
		v.number(path, name, value)
	case []any:
		if len(value) == 0 || len(value) > MaxValues {
			v.add("%s: %q holds %d values, not 1 to %d", path, name, len(value), MaxValues)
		}
		for _, x := range value {
			n, ok := x.(json.Number)
			if !ok {
				v.add("%s: %q holds a %T among its values, not a number", path, name, x)
				continue
			}
			v.number(path, name, n)
		}
	default:
		v.add("%s names %q, which is not a member of the root holding a number or an array of numbers", path, name)
	}
}

func (v *validation) number(path, name string, n json.Number) {
	if f, err := n.Float64(); err != nil || math.IsInf(f, 0) {
		v.add("%s: %q holds %s, out of range", path, name, n)
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func contains(names []string, s string) bool {
	for _, n := range names {
		if n == s {
			return true
		}
	}
	return false
}

// decode reads doc as one JSON value into maps, slices, strings,
// json.Number, bools and nil, refusing an object with a name twice: the
// specification does not say which would count.
func decode(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("not one JSON value: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name := k.(string) // the decoder only yields strings as names
			if _, dup := obj[name]; dup {
				return nil, fmt.Errorf("the name %q is in one object twice", name)
			}
			if obj[name], err = decodeValue(dec); err != nil {
				return nil, err
			}
		}
		_, err := dec.Token() // '}'
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token() // ']'
		return arr, err
	}
	return tok, nil
}

// Package emf writes CloudWatch embedded metric format (EMF) documents:
// the JSON log lines from which CloudWatch Logs extracts metrics, here the
// idempotency package's (WithCloudWatchMetrics). Package emftest checks
// them.
package emf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Writer writes EMF documents to an io.Writer, a line each, one Write at a
// time, so that the io.Writer need not be safe for concurrent use.
type Writer struct {
	namespace  string
	dimensions [][]string        // the one dimension set
	members    map[string]string // the dimensions' values

	mu sync.Mutex
	w  io.Writer
}

// Dimension is a dimension of every document of a Writer.
type Dimension struct{ Name, Value string }

// NewWriter returns a Writer of documents in namespace, one that
// CheckNamespace accepts (the caller checks it, to name what gave it),
// with dims, after checking them as CloudWatch would, so that it will not
// refuse the documents.
func NewWriter(w io.Writer, namespace string, dims ...Dimension) (*Writer, error) {
	m := &Writer{namespace: namespace, members: map[string]string{}, w: w}
	var names []string
	for _, d := range dims {
		if strings.TrimSpace(d.Value) == "" || utf8.RuneCountInString(d.Value) > 1024 {
			return nil, fmt.Errorf("the %s dimension %q is not 1 to 1,024 characters with one not white space, as CloudWatch requires", d.Name, d.Value)
		}
		names = append(names, d.Name)
		m.members[d.Name] = d.Value
	}
	m.dimensions = [][]string{names}
	return m, nil
}

// CheckNamespace applies CloudWatch's rules for a namespace.
func CheckNamespace(ns string) error {
	const allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-/#:"
	switch {
	case ns == "" || len(ns) > 255:
		return fmt.Errorf("namespace %q is not 1 to 255 characters", ns)
	case strings.TrimLeft(ns, allowed) != "":
		return fmt.Errorf("namespace %q has characters other than letters, digits, space and : . - _ / #", ns)
	case strings.TrimSpace(ns) == "":
		return errors.New("namespace is only white space")
	case strings.HasPrefix(ns, "AWS/"):
		return fmt.Errorf("namespace %q starts with AWS/, which is reserved for AWS services", ns)
	}
	return nil
}

// Metric is one metric of a document.
type Metric struct {
	Name, Unit string
	Value      float64
}

// Milliseconds is a duration metric.
func Milliseconds(name string, d time.Duration) Metric {
	return Metric{Name: name, Unit: "Milliseconds", Value: float64(d) / float64(time.Millisecond)}
}

// The document's metadata, as the specification names its members.
type (
	metadata struct {
		Timestamp         int64 // milliseconds since the Unix epoch
		CloudWatchMetrics []directive
	}
	directive struct {
		Namespace  string
		Dimensions [][]string
		Metrics    []definition
	}
	definition struct{ Name, Unit string }
)

// Write writes the document of metrics at now.
func (m *Writer) Write(now time.Time, metrics ...Metric) error {
	doc := make(map[string]any, len(m.members)+len(metrics)+1)
	defs := make([]definition, 0, len(metrics))
	for _, x := range metrics {
		defs = append(defs, definition{Name: x.Name, Unit: x.Unit})
		doc[x.Name] = x.Value
	}
	for name, v := range m.members {
		doc[name] = v
	}
	doc["_aws"] = metadata{Timestamp: now.UnixMilli(), CloudWatchMetrics: []directive{
		{Namespace: m.namespace, Dimensions: m.dimensions, Metrics: defs},
	}}
	line, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err = m.w.Write(append(line, '\n'))
	return err
}

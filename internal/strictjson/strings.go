package strictjson

import (
	"bytes"
	"unsafe"
)

// A path goes into a string by a Document step, which reads the string's
// value as JSON, or a Transform step, which makes another string of it.

// findInString takes the queries of set into the string at s.i: each one's
// step k is a Document or a Transform step.
func (s *scanner) findInString(set []*query, k int) error {
	for _, q := range set {
		if q.path[k].Kind == Transform {
			return s.findTransformed(set, k)
		}
	}
	var buf [512]byte // enough for most documents: no allocation
	text, verbatim, err := s.readString(buf[:0])
	if err != nil {
		return err
	}
	if err := s.spendCopy(set, text, verbatim, len(buf)); err != nil {
		return err
	}
	return onPath(set, s.findDocument(set, k+1, text), true)
}

// findTransformed is findInString when a Transform step reads the
// string: its value goes to the Transform in an array of its own, a copy
// even of text that is the value as it is. Given text of the document
// being read, whatever array holds it would be moved to the heap on every
// call, findInString's buffer for Document steps too: a copy costs the
// Transform's input once, no more than the event, where that costs 512
// bytes of every reading.
func (s *scanner) findTransformed(set []*query, k int) error {
	at := s.i
	var buf [64]byte
	v, verbatim, err := s.readString(buf[:0])
	if err != nil {
		return err
	}
	if err := s.spendCopy(set, v, verbatim, len(buf)); err != nil {
		return err
	}
	if err := onPath(set, s.spend(len(v)), true); err != nil {
		return err
	}
	return s.findText(set, k, bytes.Clone(v), at)
}

// spendCopy spends what readString allocated for text, the value of the
// string that s.i has just moved past, for the queries of set: nothing
// when it is a slice of the text read (verbatim) or fits in the caller's
// buffer of n bytes.
func (s *scanner) spendCopy(set []*query, text []byte, verbatim bool, n int) error {
	if verbatim || len(text) <= n {
		return nil
	}
	return onPath(set, s.spend(len(text)), true)
}

// findText takes the queries of set, each at its step k, into text, the
// value of the string at s.b[at] or what a Transform step made of one. A
// query whose path ends here gets the string; a Document step reads text
// as a JSON document; a Transform step makes another text of it, once for
// all the queries that take that step (by its Name). Every error is the
// paths'.
func (s *scanner) findText(set []*query, k int, text []byte, at int) error {
	var docArr [4]*query
	docs := docArr[:0]
	for i, q := range set {
		if q == nil { // taken with an earlier query's transform
			continue
		}
		if len(q.path) == k {
			// A Transform's text, which is the reading's own: a
			// string of it as it is, where a copy would spend as
			// much again (10 MiB for the largest Kinesis record).
			if err := s.spendAt(at, stringCost); err != nil {
				return onPath(set[i:i+1], err, true)
			}
			q.result = unsafe.String(unsafe.SliceData(text), len(text))
			continue
		}
		switch st := &q.path[k]; st.Kind {
		case Type:
			q.result = "string"
		case Document:
			docs = append(docs, q)
		case Transform:
			var sameArr [4]*query
			same := append(sameArr[:0], q)
			for j := i + 1; j < len(set); j++ {
				if r := set[j]; r != nil && len(r.path) > k && r.path[k].Kind == Transform && r.path[k].Name == st.Name {
					same = append(same, r)
					set[j] = nil
				}
			}
			out, err := s.transform(st, text)
			if err == nil {
				err = s.findText(same, k+1, out, at)
			}
			if err != nil {
				return onPath(same, err, true)
			}
		default:
			nothing(q, k+1, '"')
		}
	}
	if len(docs) == 0 {
		return nil
	}
	return onPath(docs, s.findDocument(docs, k+1, text), true)
}

// findDocument takes the queries of set, at step k, into the JSON document
// text, which the string at s.b[at] holds. The text costs nothing more:
// it is read where it is, in the string or in what was spent for it.
func (s *scanner) findDocument(set []*query, k int, text []byte) error {
	inner, err := newScanner(text, true, s.budget)
	if err != nil {
		return err
	}
	inner.space()
	if err := inner.find(set, k); err != nil {
		return inner.orSyntax(err)
	}
	return inner.end()
}

// spendAt is spend for the string at s.b[at].
func (s *scanner) spendAt(at, n int) error {
	i := s.i
	s.i = at
	err := s.spend(n)
	s.i = i
	return err
}

// transform runs st's Transform on text within the reading's budget.
func (s *scanner) transform(st *Step, text []byte) ([]byte, error) {
	if s.budget == nil {
		out, _, err := st.Transform(text, Budget{})
		return out, err
	}
	out, b, err := st.Transform(text, *s.budget)
	*s.budget = b
	return out, err
}

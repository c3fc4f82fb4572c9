package strictjson

import "unicode/utf8"

// A query follows one path through the text and keeps what it selects.
// The queries that meet at a value have all taken the same number of
// steps, since each step goes one level down: into a member, an element
// or a document held in a string. So a set of queries at a value shares
// the index k of the step each takes next.
type query struct {
	path   []Step
	result any
	err    error // a step that needed a string met none: reported once the text has been read
}

// find takes the queries of set, at the value at s.i, each its step k, and
// moves past the value. A query whose path ends here gets the value
// decoded; the others go on into it, in the same pass.
func (s *scanner) find(set []*query, k int) error {
	if s.i >= len(s.b) {
		return s.syntax("unexpected end of JSON input")
	}
	c := s.b[s.i]
	var wholeArr, deeperArr [4]*query
	whole, deeper := wholeArr[:0], deeperArr[:0]
	for _, q := range set {
		switch {
		case len(q.path) == k:
			whole = append(whole, q)
		case q.path[k].Kind == Type:
			q.result = typeName(c)
		default:
			deeper = append(deeper, q)
		}
	}
	if len(whole) > 0 {
		start := s.i
		v, err := s.value()
		if err != nil {
			return err
		}
		for _, q := range whole {
			q.result = v
		}
		if len(deeper) == 0 {
			return nil
		}
		// The deeper queries read the value again, in a scanner that
		// ends where it does.
		again := scanner{b: s.b[:s.i], i: start, depth: s.depth, quoted: s.quoted, ascii: s.ascii}
		return again.find(deeper, k)
	}
	// The queries whose step fits the value go in; the others select
	// nothing, or need the string this is not.
	want := Member
	switch c {
	case '"':
		want = Document
	case '[':
		want = Index
	case '{':
	default:
		want = 255 // none
	}
	var inArr [4]*query
	in := inArr[:0]
	for _, q := range deeper {
		if q.path[k].Kind == want {
			in = append(in, q)
			continue
		}
		nothing(q, k+1, c)
	}
	switch {
	case len(in) == 0:
		return s.skip()
	case want == Document:
		return s.findInString(in, k+1)
	case want == Member:
		return s.findMember(in, k)
	}
	return s.findElement(in, k)
}

// nothing sets the result of q, whose step k-1 selected nothing from the
// value that starts with c: nothing, unless its path needs a string
// later, or here (a Document step at k-1 on a value that is not one).
func nothing(q *query, k int, c byte) {
	q.result = nil
	if q.path[k-1].Kind == Document {
		q.err = &TypeError{Got: typeName(c)}
		return
	}
	for _, st := range q.path[k:] {
		if st.Kind == Document {
			q.err = &TypeError{Got: "null"}
			return
		}
	}
}

// findInString takes the queries of set, at step k, into the document held
// in the string at s.i: step k-1 of each is the Document step, which
// refuses a document longer than its Limit.
func (s *scanner) findInString(set []*query, k int) error {
	at := s.i
	var buf [512]byte // enough for most documents: no allocation
	text, _, err := s.readString(buf[:0])
	if err != nil {
		return err
	}
	for _, q := range set {
		if limit := q.path[k-1].Limit; limit > 0 && len(text) > limit {
			return &LimitError{Offset: at, Quoted: s.quoted, Limit: limit, Len: len(text)}
		}
	}
	inner, err := newScanner(text, true)
	if err != nil {
		return err
	}
	inner.space()
	if err := inner.find(set, k); err != nil {
		return inner.orSyntax(err)
	}
	return inner.end()
}

// findMember takes the queries of set, each at a Member step k, into the
// object at s.i. Two names that fold to one another are refused, as in
// every object; so is a query's name present only in a case variant,
// which encoding/json would read as that name.
func (s *scanner) findMember(set []*query, k int) error {
	if err := s.enter(); err != nil {
		return err
	}
	// Per query: the name it wants, whether its member was met, and the
	// first case variant of its name.
	type want struct {
		name      string
		found     bool
		variant   string
		variantAt int
	}
	var arr [4]want
	wants := arr[:0]
	if len(set) > len(arr) {
		wants = make([]want, 0, len(set))
	}
	// A name that starts with an ASCII byte folds only to names that
	// start with it in either case (see sameFold): the names that start
	// with none of the wanted ones, most, are compared with none. This
	// saves ~3,400 instructions in the middleware's search.
	var firsts byteSet // upper-cased
	others := false    // a wanted name starts otherwise
	for _, q := range set {
		name := q.path[k].Name
		wants = append(wants, want{name: name})
		if name == "" || name[0] >= utf8.RuneSelf {
			others = true
		} else {
			firsts.add(upper(name[0]))
		}
	}
	var ns names
	var buf [64]byte
	var subArr [4]*query
	sub := subArr[:0]
	for more := s.open('}'); more; {
		at := s.i
		key, plain, err := s.name(buf[:0])
		if err != nil {
			return err
		}
		if err := s.addKey(&ns, at, key, plain); err != nil {
			return err
		}
		sub = sub[:0]
		if others || len(key) == 0 || key[0] >= utf8.RuneSelf || firsts.has(upper(key[0])) {
			for j := range wants {
				switch w := &wants[j]; {
				case string(key) == w.name:
					w.found = true
					sub = append(sub, set[j])
				case w.variant == "" && sameFold(key, w.name):
					w.variant, w.variantAt = string(key), at
				}
			}
		}
		if more, err = s.member(sub, k+1, '}'); err != nil {
			return err
		}
	}
	s.depth--
	for j, w := range wants {
		switch {
		case w.variant != "":
			// Not found: the variant and the name would be two names
			// that fold to one another.
			return &DuplicateNameError{Offset: w.variantAt, Quoted: s.quoted, Name: w.name, Variant: w.variant}
		case !w.found:
			nothing(set[j], k+1, '{')
		}
	}
	return nil
}

// member reads the value of a member or element at s.i, taking the
// queries of sub into it at step k (skipping it when there are none), and
// the ',' or closing byte after it: more reports whether another follows.
func (s *scanner) member(sub []*query, k int, closing byte) (more bool, err error) {
	if len(sub) > 0 {
		err = s.find(sub, k)
	} else {
		err = s.skip()
	}
	if err != nil {
		return false, err
	}
	return s.next(closing)
}

// findElement takes the queries of set, each at an Index step k, into the
// array at s.i.
func (s *scanner) findElement(set []*query, k int) error {
	if err := s.enter(); err != nil {
		return err
	}
	n := 0
	var subArr [4]*query
	sub := subArr[:0]
	for more := s.open(']'); more; n++ {
		sub = sub[:0]
		for _, q := range set {
			if q.path[k].Index == n {
				sub = append(sub, q)
			}
		}
		var err error
		if more, err = s.member(sub, k+1, ']'); err != nil {
			return err
		}
	}
	s.depth--
	for _, q := range set {
		if q.path[k].Index >= n {
			nothing(q, k+1, '[')
		}
	}
	return nil
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (set *byteSet) add(c byte)      { set[c/64] |= 1 << (c % 64) }
func (set *byteSet) has(c byte) bool { return set[c/64]>>(c%64)&1 != 0 }

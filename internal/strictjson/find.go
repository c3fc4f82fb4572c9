package strictjson

import "unicode/utf8"

// A query follows one path through the text and keeps what it selects.
// The queries that meet at a value have all taken the same number of
// steps, since each step goes one level down: into a member, an element
// or a document held in a string, or from a string to what a Transform
// makes of it. So a set of queries at a value shares the index k of the
// step each takes next.
type query struct {
	path   []Step
	index  int // of the path, in FindAll's
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
		case q.path[k].Select && c == 'n':
			q.result = nil // a multi-select of null
		default:
			deeper = append(deeper, q)
		}
	}
	if len(whole) > 0 {
		start := s.i
		v, err := s.value()
		if err != nil {
			return onPath(whole, err, isLimit(err))
		}
		for _, q := range whole {
			q.result = v
		}
		if len(deeper) == 0 {
			return nil
		}
		// The deeper queries read the value again, in a scanner that
		// ends where it does.
		again := scanner{b: s.b[:s.i], i: start, depth: s.depth, quoted: s.quoted, ascii: s.ascii, budget: s.budget}
		return again.find(deeper, k)
	}
	// The queries whose step fits the value go in; the others select
	// nothing, or need the string this is not.
	var inArr [4]*query
	in := inArr[:0]
	for _, q := range deeper {
		if fits(q.path[k].Kind, c) {
			in = append(in, q)
			continue
		}
		nothing(q, k+1, c)
	}
	switch {
	case len(in) == 0:
		return s.skip()
	case c == '"':
		return s.findInString(in, k)
	case c == '{':
		return s.findMember(in, k)
	}
	return s.findElement(in, k)
}

// fits reports whether a step of kind goes into the value that starts
// with c.
func fits(kind StepKind, c byte) bool {
	switch c {
	case '"':
		return kind == Document || kind == Transform
	case '[':
		return kind == Index || kind == Each
	case '{':
		return kind == Member
	}
	return false
}

// nothing sets the result of q, whose step k-1 selected nothing from the
// value that starts with c: nothing, unless a step needs a string there
// (a Document or Transform step on a value that is not one) or later,
// where null would meet it; but not past an Each step, whose projection
// of nothing is nothing, nor past a Select step, whose multi-select of
// nothing is nothing.
func nothing(q *query, k int, c byte) {
	q.result = nil
	switch st := &q.path[k-1]; {
	case st.needsString():
		q.err = &TypeError{Name: st.Name, Got: typeName(c)}
		return
	case st.Kind == Each:
		return
	}
	for i := k; i < len(q.path) && q.path[i].Kind != Each && !q.path[i].Select; i++ {
		if st := &q.path[i]; st.needsString() {
			q.err = &TypeError{Name: st.Name, Got: "null"}
			return
		}
	}
}

// onPath returns err, met by the queries of set together, as a
// *PathError naming the first of them, when it is theirs (path): an
// error inside a document or a transform on their path, or a value of
// theirs past the budget. An error of the text that every path reads, or
// one already named, is returned as it is.
func onPath(set []*query, err error, path bool) error {
	if _, named := err.(*PathError); named || !path || err == nil {
		return err
	}
	first := set[0].index
	for _, q := range set[1:] {
		first = min(first, q.index)
	}
	return &PathError{Path: first, Err: err}
}

func isLimit(err error) bool {
	_, ok := err.(*LimitError)
	return ok
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
			err := &DuplicateNameError{Offset: w.variantAt, Quoted: s.quoted, Name: w.name, Variant: w.variant}
			return onPath(set[j:j+1], err, true)
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

// findElement takes the queries of set, each at an Index or an Each step
// k, into the array at s.i. An Each query follows the rest of its path in
// every element, with a query of its own there, and gets the list of
// what they select.
func (s *scanner) findElement(set []*query, k int) error {
	if err := s.enter(); err != nil {
		return err
	}
	var eachArr [4]*query
	each := eachArr[:0]
	for _, q := range set {
		if q.path[k].Kind == Each {
			each = append(each, q)
		}
	}
	var inner []query // each one's query in the element at hand
	var lists [][]any
	if len(each) > 0 {
		if err := s.spend(len(each) * sliceCost); err != nil {
			return onPath(each, err, true)
		}
		inner = make([]query, len(each))
		lists = make([][]any, len(each))
	}
	n := 0
	var subArr [4]*query
	sub := subArr[:0]
	for more := s.open(']'); more; n++ {
		sub = sub[:0]
		for _, q := range set {
			if q.path[k].Kind == Index && q.path[k].Index == n {
				sub = append(sub, q)
			}
		}
		for j, q := range each {
			inner[j] = query{path: q.path, index: q.index}
			sub = append(sub, &inner[j])
		}
		var err error
		if more, err = s.member(sub, k+1, ']'); err != nil {
			return err
		}
		for j, q := range each {
			r := &inner[j]
			if r.err != nil && q.err == nil {
				q.err = r.err
			}
			if r.result != nil {
				if lists[j], err = s.appendValue(lists[j], r.result); err != nil {
					return onPath(each[j:j+1], err, true)
				}
			}
		}
	}
	s.depth--
	for j, q := range each {
		q.result = lists[j]
		if lists[j] == nil {
			q.result = []any{}
		}
	}
	for _, q := range set {
		if q.path[k].Kind == Index && q.path[k].Index >= n {
			nothing(q, k+1, '[')
		}
	}
	return nil
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (set *byteSet) add(c byte)      { set[c/64] |= 1 << (c % 64) }
func (set *byteSet) has(c byte) bool { return set[c/64]>>(c%64)&1 != 0 }

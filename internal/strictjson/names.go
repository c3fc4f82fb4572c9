package strictjson

import (
	"unicode"
	"unicode/utf8"
)

// EqualFold reports whether encoding/json fills one struct field from
// members named a and b: whether they are equal once folded as it folds
// them (see foldName). It serves readers of values decoded here that
// must apply the same rule, such as a JMESPath field lookup.
func EqualFold(a, b string) bool { return sameFold(a, b) }

// names holds the names of the members of one object read so far, to
// refuse two that fold to one another. The first few are kept as offsets
// and hashes in arrays, without allocating: nearly every object of a
// Lambda event has 16 members or fewer. A name is compared with those
// only when one of them may have its hash (a bit of bloom), and then
// only with those that have it: checking the names of the middleware's
// event takes ~2,000 instructions so, ~3,000 fewer than by comparing each
// name with every one before it. Past the first few, folded names go in a
// map, so that a huge object costs no more than a map.
type names struct {
	bloom uint64 // bit hash>>26 set for every name in at
	n     int
	at    [16]int        // the offsets of their opening quotes
	hash  [16]uint32     // the keyHash of their keys
	many  map[string]int // folded name -> offset of its member, past them
}

// keyHash is a hash of a name's key: the name itself when it is plain
// (ASCII without escapes), else its folded form (see keyAt). It is equal
// for keys that fold to one another: the key of a plain name is folded
// by comparison (upper), and c|0x20 is one byte for both cases of a
// letter. It mixes the length and three bytes by a multiplication, whose
// top bits depend on them all.
func keyHash(key []byte) uint32 {
	n := len(key)
	if n == 0 {
		return 0
	}
	h := uint32(n) | uint32(key[0]|0x20)<<8 | uint32(key[n/2]|0x20)<<16 | uint32(key[n-1]|0x20)<<24
	return h * 0x9e3779b1
}

// add adds the name at offset at, whose key has hash h, and reports
// true, when no name before may have its hash and the first few are not
// all taken: else the caller must call addName. It is inlined.
func (ns *names) add(at int, h uint32) bool {
	bit := uint64(1) << (h >> 26)
	if ns.bloom&bit != 0 || ns.n >= len(ns.at) {
		return false
	}
	ns.bloom |= bit
	ns.at[ns.n] = at
	ns.hash[ns.n] = h
	ns.n++
	return true
}

// addName adds to ns the name at s.b[at], whose key is key with hash h,
// when add did not, refusing it with a [*DuplicateNameError] if a name
// before folds to it.
func (s *scanner) addName(ns *names, at int, key []byte, h uint32) error {
	if ns.many == nil {
		for j, other := range ns.at[:ns.n] {
			if ns.hash[j] != h {
				continue
			}
			if k, _ := s.keyAt(other); len(k) == len(key) && sameUpper(k, key) {
				return s.duplicate(at, s.nameAt(at), s.nameAt(other))
			}
		}
		if ns.n < len(ns.at) {
			ns.bloom |= 1 << (h >> 26)
			ns.at[ns.n] = at
			ns.hash[ns.n] = h
			ns.n++
			return nil
		}
		ns.many = make(map[string]int, 2*len(ns.at))
		for _, other := range ns.at {
			k, _ := s.keyAt(other)
			ns.many[string(appendUpper(nil, k))] = other
		}
	}
	folded := string(appendUpper(nil, key))
	if other, ok := ns.many[folded]; ok {
		return s.duplicate(at, s.nameAt(at), s.nameAt(other))
	}
	ns.many[folded] = at
	return nil
}

// addKey adds to ns the name at s.b[at], decoded as name; plain says
// that it is ASCII without escapes.
func (s *scanner) addKey(ns *names, at int, name []byte, plain bool) error {
	key := name
	if !plain {
		key = appendFolded(nil, name)
	}
	if h := keyHash(key); !ns.add(at, h) {
		return s.addName(ns, at, key, h)
	}
	return nil
}

// keyAt returns the key (see keyHash) of the name at s.b[at], valid JSON
// but for its surrogates, which it checks.
func (s *scanner) keyAt(at int) ([]byte, error) {
	end, flags := stringEnd(s.b, at+1)
	if key := s.b[at+1 : end]; flags == 0 && (s.ascii || isASCII(key)) {
		return key, nil
	}
	var buf [64]byte
	t := scanner{b: s.b, i: at, quoted: s.quoted, ascii: s.ascii}
	name, _, err := t.readString(buf[:0])
	if err != nil {
		return nil, err
	}
	return appendFolded(nil, name), nil
}

// nameAt decodes the member name at s.b[at], already read once, for an
// error.
func (s *scanner) nameAt(at int) string {
	t := scanner{b: s.b, i: at}
	v, _, _ := t.readString(nil)
	return string(v)
}

// foldName folds name as encoding/json folds member names to find a struct
// field: ASCII letters to upper case, every other rune to the
// smallest of its Unicode simple folding orbit (so the Kelvin sign K and
// "k" both become "K"). Two names fill the same field exactly when their
// folded forms are equal, as bytes.EqualFold would say.
func foldName(name string) string {
	return string(appendFolded(make([]byte, 0, len(name)), name))
}

func appendFolded[T string | []byte](out []byte, name T) []byte {
	for _, r := range string(name) {
		if r < utf8.RuneSelf {
			out = append(out, upper(byte(r)))
			continue
		}
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// sameFold reports whether a and b fold to the same name. ASCII names of
// different lengths never do; other names may (the Kelvin sign takes three
// bytes, the "k" it folds to one).
func sameFold[A, B string | []byte](a A, b B) bool {
	// Names fold rune by rune: two ASCII first bytes that differ but for
	// case settle it at once, as they do for most pairs of names.
	if len(a) > 0 && len(b) > 0 && a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf && upper(a[0]) != upper(b[0]) {
		return false
	}
	if isASCII(a) && isASCII(b) {
		return len(a) == len(b) && sameUpper(a, b)
	}
	return foldName(string(a)) == foldName(string(b))
}

// sameUpper reports whether a and b, of one length, are equal once
// ASCII letters are upper-cased: for folded names, whether they are one.
func sameUpper[A, B string | []byte](a A, b B) bool {
	for i := 0; i < len(a); i++ {
		if upper(a[i]) != upper(b[i]) {
			return false
		}
	}
	return true
}

func appendUpper(out, s []byte) []byte {
	for _, c := range s {
		out = append(out, upper(c))
	}
	return out
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func isASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

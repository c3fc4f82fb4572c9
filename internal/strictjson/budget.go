package strictjson

// A Budget bounds what one reading decodes, in bytes, whatever the text
// holds: the documents that Document steps read out of strings, what
// Transform steps make of strings, and the values built from the text
// (the ones a path selects, the lists of an Each step, the whole text
// for Decode), each counted as it is built, at the memory it takes (see
// the costs below). A few bytes of text can stand for many more of
// decoded values: "{}," is one map, 48 bytes, and a slot of a slice, 16.
//
// The zero Budget, and a nil one, have no limit. A Budget serves one
// reading at a time.
type Budget struct {
	// Limit is the most that may be spent; 0 or less sets none.
	Limit int
	spent int
}

// Spend counts n more bytes, or fails with a [*LimitError] when they
// would take the total past the Limit, which leaves the Budget as it
// was.
func (b *Budget) Spend(n int) error {
	if b == nil || b.Limit <= 0 {
		return nil
	}
	if n > b.Limit-b.spent {
		return &LimitError{Offset: -1, Limit: b.Limit, Len: b.spent + n}
	}
	b.spent += n
	return nil
}

// Left is how much may still be spent: the most a decoder may produce.
func (b *Budget) Left() int {
	if b == nil || b.Limit <= 0 {
		return int(^uint(0) >> 1)
	}
	return b.Limit - b.spent
}

// The costs of decoded values, in bytes: what Go (1.26, on a 64-bit
// machine) allocates for them, or slightly more. A string or a number
// costs its bytes and the interface that holds it; an array, the
// interface of its slice and the slots that its growth allocates; an
// object, its map, the first group of eight slots at its first member,
// and for each member past eight its share of the tables that the map
// grows through. The allocation tests of the idempotency package check
// that what a reading allocates stays within a few times what it spends.
const (
	stringCost    = 16  // a string or json.Number in an interface, and its bytes
	sliceCost     = 24  // a []any in an interface
	slotCost      = 16  // an element of a []any
	mapCost       = 48  // an empty map[string]any
	mapGroupCost  = 288 // its first member, and the seven after it
	mapMemberCost = 192 // each member past eight, and its name's bytes
)

// StringCost is the cost of a string of n bytes.
func StringCost(n int) int { return stringCost + n }

// ListCost is the cost of a []any of n elements made at its length.
func ListCost(n int) int { return sliceCost + n*slotCost }

// ObjectCost is the cost of a map[string]any of n members, but for their
// names' bytes.
func ObjectCost(n int) int {
	c := mapCost
	if n > 0 {
		c += mapGroupCost
	}
	return c + max(n-8, 0)*mapMemberCost
}

// memberCost is the cost of the nth member (from 1) put in a map, but
// for its name's bytes.
func memberCost(n int) int {
	switch {
	case n == 1:
		return mapGroupCost
	case n > 8:
		return mapMemberCost
	}
	return 0
}

// spend is Budget.Spend for the scanner, which says where it was.
func (s *scanner) spend(n int) error {
	if err := s.budget.Spend(n); err != nil {
		le := err.(*LimitError)
		le.Offset, le.Quoted = s.i, s.quoted
		return le
	}
	return nil
}

// appendValue appends v to a, growing a by doubling and spending each
// new array's slots: a list grown so allocates at most twice its length,
// where append's growth by a quarter past 256 elements allocates about
// five times.
func (s *scanner) appendValue(a []any, v any) ([]any, error) {
	if len(a) == cap(a) {
		n := max(4, 2*cap(a))
		if err := s.spend(n * slotCost); err != nil {
			return nil, err
		}
		a = append(make([]any, 0, n), a...)
	}
	return append(a, v), nil
}

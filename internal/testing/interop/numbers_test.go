package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The compatibility modes refuse a number that the runtime does not read
// exactly (idempotency.InexactNumberError). These tests show why, on the
// real runtimes: Powertools gives such a number the key and the payload
// hash of another number, while every number Go accepts gets Powertools'
// own key.

// numberCase is the key case of number: the key is the object holding it,
// the validated payload the array holding it, so that it is nested in
// both.
func numberCase(number string) keyCase {
	return keyCase{Event: `{"a":{"n":[` + number + `]}}`, Expr: "a", Validation: "a.n", Hash: "md5", name: number}
}

// goNumber returns the key and payload hash of numberCase(number) in Go,
// or the *InexactNumberError it is refused with; any other error fails.
func goNumber(t *testing.T, h *idempotency.Handler, number string) (keyResult, *idempotency.InexactNumberError) {
	t.Helper()
	key, payload, err := h.KeyOf([]byte(numberCase(number).Event))
	if err == nil {
		return keyResult{Key: key, Payload: payload}, nil
	}
	inexact, ok := errors.AsType[*idempotency.InexactNumberError](err)
	if !ok || !errors.As(err, new(*idempotency.InvalidEventError)) || inexact.Path != "n[0]" || inexact.Number != number {
		t.Fatalf("%s: error %v, want an *InvalidEventError with an *InexactNumberError for n[0]", number, err)
	}
	return keyResult{}, inexact
}

func numberHandler(t *testing.T, compat idempotency.Compatibility) *idempotency.Handler {
	t.Helper()
	return idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, json.RawMessage) (any, error) { return nil, nil },
		idempotency.WithCompatibility(compat), idempotency.WithKeyPrefix("p"),
		idempotency.WithEventKey("a"), idempotency.WithPayloadValidation("a.n"))
}

// rat is the exact value of a JSON number.
func rat(t *testing.T, number string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(number)
	if !ok {
		t.Fatalf("big.Rat cannot read %s", number)
	}
	return r
}

// TestRefusedPairsMergeInPowertools takes pairs of different numbers:
// where Go refuses one in a mode, the runtime gives both one key and one
// payload hash, so that its function would answer the second request with
// the first one's response; where Go accepts both, the runtime keeps them
// apart, with Go's keys.
func TestRefusedPairsMergeInPowertools(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{
		{"100.0", "100.00000000000000001"},
		{"0.1", "0.1000000000000000055511151231257827"},
		{"0.30000000000000004", "0.3000000000000000444"},
		{"1e400", "2e400"},
		{"-1e400", "-2e400"},
		{"1e-400", "2e-400"},
		{"5e-324", "4.9406564584124654e-324"},
		{"1.7976931348623157e308", "1.7976931348623158e308"},
		{"9007199254740992", "9007199254740993"},
		{"-9007199254740992", "-9007199254740993"},
		{"12345678901234567000", "12345678901234567890"},
		{"100", "100.5"}, // accepted, and apart, everywhere
	}
	var cases []keyCase
	for _, p := range pairs {
		cases = append(cases, numberCase(p[0]), numberCase(p[1]))
	}
	for _, rt := range runtimes(t) {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			theirs := batch[keyCase, keyResult](t, rt, "keys", cases)
			h := numberHandler(t, rt.compat)
			for i, p := range pairs {
				a, b := theirs[2*i], theirs[2*i+1]
				if a.Error != "" || b.Error != "" || a.Key == "" {
					t.Fatalf("%s %s / %s: %+v, %+v", rt.name, p[0], p[1], a, b)
				}
				merged := a == b
				goA, inexactA := goNumber(t, h, p[0])
				goB, inexactB := goNumber(t, h, p[1])
				switch refused := inexactA != nil || inexactB != nil; {
				case refused && !merged:
					t.Errorf("%s keeps %s and %s apart, and Go refuses one of them", rt.name, p[0], p[1])
				case !refused && merged:
					t.Errorf("%s gives %s and %s one key, and Go accepts both", rt.name, p[0], p[1])
				case !refused && (goA != a || goB != b):
					t.Errorf("%s / %s: Go %+v, %+v; %s %+v, %+v", p[0], p[1], goA, goB, rt.name, a, b)
				case refused:
					t.Logf("%s merges %s and %s (key %s); Go refuses %s", rt.name, p[0], p[1], a.Key, refusedOf(p, inexactA, inexactB))
				}
			}
		})
	}
}

// refusedOf names the numbers of pair that Go refuses.
func refusedOf(pair [2]string, a, b *idempotency.InexactNumberError) string {
	switch {
	case a != nil && b != nil:
		return "both"
	case a != nil:
		return pair[0]
	}
	return pair[1]
}

// TestNumberKeys compares the keys of numbers near the edges of what a
// double holds: integers around 2^53 and 2^63, decimals of 15, 16 and 17
// significant digits, the largest doubles and the smallest normal and
// subnormal ones, and random doubles as strconv writes them with 17 and
// more digits. Every number Go accepts has the runtime's key; every number
// it refuses has, in the runtime, the key of another number: the double's
// shortest text, or for a number beyond a double's range, 1e999.
func TestNumberKeys(t *testing.T) {
	t.Parallel()
	seed := newSeed(t)
	numbers := edgeNumbers(rand.New(rand.NewPCG(seed, 0xd0b1e)))
	for _, rt := range runtimes(t) {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			h := numberHandler(t, rt.compat)
			var cases []keyCase
			ours := make([]keyResult, len(numbers))
			own := make([]int, len(numbers))     // the index of each number's case
			partner := make([]int, len(numbers)) // and of its partner's, for a refused number
			for i, n := range numbers {
				own[i] = len(cases)
				cases = append(cases, numberCase(n))
				var inexact *idempotency.InexactNumberError
				if ours[i], inexact = goNumber(t, h, n); inexact != nil {
					partner[i] = len(cases)
					cases = append(cases, numberCase(partnerOf(t, n)))
				}
			}
			theirs := batch[keyCase, keyResult](t, rt, "keys", cases)
			var accepted, refused, failures int
			for i, n := range numbers {
				w := theirs[own[i]]
				if w.Error != "" || w.Skip {
					t.Fatalf("%s %s: %+v", rt.name, n, w)
				}
				if partner[i] == 0 {
					accepted++
					if ours[i] != w {
						if failures++; failures <= 10 {
							t.Errorf("%s: Go %+v; %s %+v", n, ours[i], rt.name, w)
						}
					}
					continue
				}
				refused++
				p := partnerOf(t, n)
				if pw := theirs[partner[i]]; pw != w {
					if failures++; failures <= 10 {
						t.Errorf("Go refuses %s, and %s keys it apart from %s: %+v, %+v", n, rt.name, p, w, pw)
					}
				} else if refused <= 3 {
					t.Logf("%s gives %s the key of %s: Go refuses it", rt.name, n, p)
				}
			}
			t.Logf("%s: %d numbers, %d keyed as Powertools keys them, %d refused, each keyed by Powertools as another number", rt.name, len(numbers), accepted, refused)
			if accepted < len(numbers)/4 || refused < len(numbers)/10 {
				t.Errorf("%d accepted and %d refused of %d: the numbers miss one side of the edge", accepted, refused, len(numbers))
			}
		})
	}
}

// partnerOf returns a number other than number that a runtime reading
// it as a double reads alike: the double's shortest text in exponent
// form (a float for Python too), or 1e999 beyond the double's range.
func partnerOf(t *testing.T, number string) string {
	t.Helper()
	f, _ := strconv.ParseFloat(number, 64)
	p := strconv.FormatFloat(f, 'e', -1, 64)
	switch {
	case math.IsInf(f, 1):
		p = "1e999"
	case math.IsInf(f, -1):
		p = "-1e999"
	}
	if rat(t, p).Cmp(rat(t, number)) == 0 {
		t.Fatalf("%s: its partner %s is the same number", number, p)
	}
	return p
}

// edgeNumbers returns numbers on both sides of what a double holds.
func edgeNumbers(r *rand.Rand) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, base := range []int64{1 << 53, 1 << 54, 1 << 62} {
		for d := int64(-3); d <= 3; d++ {
			add("%d", base+d)
			add("%d", -(base + d))
		}
	}
	add("9223372036854775807")
	add("123456789012345678901234567890")
	for _, s := range []string{
		"1.7976931348623157e308", "1.7976931348623158e308", "1.797693134862316e308", "1e308", "1e309",
		"2.2250738585072014e-308", "2.2250738585072011e-308", "2.225073858507201e-308",
		"5e-324", "1e-323", "2.5e-324", "2e-324", "1e-320", "1.23456789012345e-320",
		"0.1", "0.10000000000000001", "0.1000000000000000055511151231257827", "100.00000000000000001",
		"1e400", "-1e400", "1e-400", "0e400", "-0.0e-400",
	} {
		add("%s", s)
	}
	digits := func(n int) string {
		b := make([]byte, n)
		b[0] = byte('1' + r.IntN(9))
		for i := 1; i < n; i++ {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	for range 300 {
		// 15 to 17 significant digits, the point anywhere in them, an
		// exponent now and then.
		d := digits(15 + r.IntN(3))
		p := r.IntN(len(d))
		s := d[:p+1] + "." + d[p+1:]
		s = strings.TrimSuffix(s, ".")
		if r.IntN(3) == 0 {
			s += "e" + strconv.Itoa(r.IntN(600)-300)
		}
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		add("%s", s)
	}
	for range 200 {
		f := math.Float64frombits(r.Uint64())
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		add("%s", strconv.FormatFloat(f, 'g', -1, 64)) // Go's own text: accepted
		add("%s", strconv.FormatFloat(f, 'e', 16+r.IntN(6), 64))
	}
	return out
}

package interop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// newSeed returns INTEROP_SEED, or a new seed, and logs it.
func newSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("INTEROP_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("INTEROP_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (INTEROP_SEED=%d replays it)", seed, seed)
	return seed
}

// generator writes random JSON events, as text, so that it chooses how
// each number and character is written.
type generator struct{ r *rand.Rand }

func newGenerator(seed uint64) *generator {
	return &generator{rand.New(rand.NewPCG(seed, 0x1dea))}
}

// names are member names that the runtimes treat specially: array
// indexes, which JavaScript lists first ("4294967295" is not one); names
// whose lowercase form is special (İ, a final Σ) or whose UTF-16 order
// differs from their code point order (U+E000 against astral
// characters). "__proto__", which deepSort drops and TypeScript mode
// refuses, has a test of its own.
var names = []string{
	"a", "b", "id", "order_id", "Amount", "amount_cents", "",
	"0", "2", "10", "01", "-1", "1.5", "4294967294", "4294967295",
	"é", "ß", "ΑΣ!", "ασ", "İ", "i!", "ǅ", "😀", "\ue000", "𝒜", "a\u0301",
	"x\"y", `back\slash`, "tab\t", "\u2028", " ",
}

// runeSets are the characters of generated text, one set drawn at a time.
var runeSets = [][]rune{
	[]rune("abcXYZ019 _-."),
	[]rune("\"\\/<>&'"),
	{0, 1, 8, 9, 10, 12, 13, 0x1f, 0x7f, 0x80, 0x9f},
	[]rune("éßΣσςİıÅ中文"),
	{0x2028, 0x2029, 0xfffd, 0xfeff, 0xe000, 0xffff, 0x200d, 0x301},
	{0x1f600, 0x1d49c, 0x10ffff, 0x10000},
}

// numbers are literals at the edges that both runtimes read exactly:
// signed zeros, the ends of the doubles, integers around 2^53, Python's
// and JavaScript's switches between fixed and exponent notation. The
// numbers they do not read exactly, which Go refuses, are the number
// tests'.
var numbers = []string{
	"0", "-0", "0.0", "-0.0", "1", "1.0", "-1.50", "1e2", "1E+2", "1e-7", "1.5e300",
	"5e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "9007199254740992", "9007199254740991",
	"-9007199254740992", "12345678901234567000", "0.30000000000000004", "0.1", "100", "1e21",
	"1e20", "1e-6", "123e-20", "0.000001", "0.0000001", "1e16", "1e15", "1e-5", "0.0001", "0.00001",
}

func (g *generator) event() string {
	var b strings.Builder
	g.object(&b, 0, []string{"a", "b"})
	return b.String()
}

func (g *generator) space(b *strings.Builder) {
	b.WriteString([]string{"", "", "", " ", "\n", "\t", "\r\n  "}[g.r.IntN(7)])
}

func (g *generator) value(b *strings.Builder, depth int) {
	g.space(b)
	switch pick := g.r.IntN(10); {
	case depth < 4 && pick < 2:
		g.object(b, depth+1, nil)
	case depth < 4 && pick < 4:
		g.array(b, depth+1)
	case pick < 6:
		b.WriteString(g.number())
	case pick < 9:
		g.text(b, g.str())
	default:
		b.WriteString([]string{"true", "false", "null"}[g.r.IntN(3)])
	}
	g.space(b)
}

// object writes an object with the required names and some others, never
// two that encoding/json's case folding matches (the key search refuses
// those: docs/security.md).
func (g *generator) object(b *strings.Builder, depth int, required []string) {
	chosen := append([]string(nil), required...)
	for range g.r.IntN(6) {
		name := names[g.r.IntN(len(names))]
		if g.r.IntN(3) == 0 {
			name = g.str()
		}
		if !slicesContainsFold(chosen, name) {
			chosen = append(chosen, name)
		}
	}
	g.r.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
	b.WriteByte('{')
	for i, name := range chosen {
		if i > 0 {
			b.WriteByte(',')
		}
		g.space(b)
		g.text(b, name)
		g.space(b)
		b.WriteByte(':')
		g.value(b, depth)
	}
	g.space(b)
	b.WriteByte('}')
}

func slicesContainsFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}

func (g *generator) array(b *strings.Builder, depth int) {
	b.WriteByte('[')
	for i := range g.r.IntN(5) {
		if i > 0 {
			b.WriteByte(',')
		}
		g.value(b, depth)
	}
	g.space(b)
	b.WriteByte(']')
}

// number returns an edge literal, a random double as strconv writes it,
// or a random number of up to 15 significant digits, with an integer part,
// a fraction and an exponent in any mix: numbers both runtimes read
// exactly, so that the events are keyed, and compared.
func (g *generator) number() string {
	switch g.r.IntN(6) {
	case 0, 1:
		return numbers[g.r.IntN(len(numbers))]
	case 2:
		for {
			if f := math.Float64frombits(g.r.Uint64()); !math.IsInf(f, 0) && !math.IsNaN(f) {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
	}
	var b strings.Builder
	if g.r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	total := 1 + g.r.IntN(15)
	if n := g.r.IntN(total + 1); n == 0 {
		b.WriteByte('0')
		b.WriteByte('.')
		g.digits(&b, total)
	} else {
		b.WriteByte(byte('1' + g.r.IntN(9)))
		g.digits(&b, n-1)
		if n < total {
			b.WriteByte('.')
			g.digits(&b, total-n)
		}
	}
	if g.r.IntN(3) == 0 {
		b.WriteString([]string{"e", "E", "e+", "e-", "E-"}[g.r.IntN(5)])
		g.digits(&b, 1+g.r.IntN(2))
	}
	return b.String()
}

func (g *generator) digits(b *strings.Builder, n int) {
	for range n {
		b.WriteByte(byte('0' + g.r.IntN(10)))
	}
}

func (g *generator) str() string {
	var b strings.Builder
	for range g.r.IntN(7) {
		set := runeSets[g.r.IntN(len(runeSets))]
		b.WriteRune(set[g.r.IntN(len(set))])
	}
	return b.String()
}

// text writes s as a JSON string, each character as itself or escaped,
// at random: short escapes, \u escapes in either case, surrogate pairs.
func (g *generator) text(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		short := map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}[r]
		mustEscape := r == '"' || r == '\\' || r < 0x20
		switch {
		case short != "" && (mustEscape || g.r.IntN(2) == 0) && g.r.IntN(4) != 0:
			b.WriteString(short)
		case mustEscape || g.r.IntN(4) == 0:
			format := "\\u%04x"
			if g.r.IntN(2) == 0 {
				format = "\\u%04X"
			}
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(b, format+format, hi, lo)
			} else {
				fmt.Fprintf(b, format, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

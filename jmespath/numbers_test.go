package jmespath

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// FuzzCompareNumbers checks the exact comparison of number texts against
// math/big on numbers small enough for big.Rat.
func FuzzCompareNumbers(f *testing.F) {
	for _, s := range [][2]string{
		{"1", "1.0"}, {"-0", "0"}, {"0.1", "1e-1"}, {"-1.5", "1.01"}, {"12345678901234567890", "12345678901234567891"},
		{"9007199254740993", "9007199254740992.0"}, {"-2e3", "-1999.999"}, {"100", "1e2"}, {"0.00", "-0e5"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !isJSONNumber(a) || !isJSONNumber(b) || len(a) > 64 || len(b) > 64 ||
			strings.ContainsAny(a+b, "eE") && (len(a) > 20 || len(b) > 20) {
			return
		}
		x, okx := new(big.Rat).SetString(a)
		y, oky := new(big.Rat).SetString(b)
		if !okx || !oky {
			return
		}
		want := x.Cmp(y)
		if got, _ := compareNumbers(json.Number(a), json.Number(b)); got != want {
			t.Fatalf("compare(%s, %s) = %d, want %d", a, b, got, want)
		}
	})
}

func isJSONNumber(s string) bool {
	if s == "" || s[0] != '-' && !isDigit(s[0]) {
		return false
	}
	_, err := decodeStd([]byte(s))
	return err == nil
}

func TestCompareFloatAndNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    float64
		n    string
		want int
	}{
		{0.1, "0.1", 0},
		{0.1, "0.10000000000000001", -1}, // the float counts as its shortest text, 0.1
		{1e21, "1e21", 0},
		{1e21, "1000000000000000000001", -1},
		{-3, "-3.0", 0},
		{9007199254740992, "9007199254740993", -1},
		{1.5, "1.25", 1},
	}
	for _, tt := range tests {
		if got, ok := compareNumbers(tt.f, json.Number(tt.n)); !ok || got != tt.want {
			t.Errorf("compare(%v, %s) = %d, want %d", tt.f, tt.n, got, tt.want)
		}
		if got, _ := compareNumbers(json.Number(tt.n), tt.f); got != -tt.want {
			t.Errorf("compare(%s, %v) = %d, want %d", tt.n, tt.f, got, -tt.want)
		}
	}
}

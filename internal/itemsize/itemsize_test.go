package itemsize

import (
	"math"
	"strconv"
	"testing"
)

func TestInt(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{0, 1, 9, 10, -1, -9, -10, 99, 100, 1700000000, -1700000000123, math.MaxInt64, math.MinInt64} {
		if got, want := Int(n), Number(strconv.FormatInt(n, 10)); got != want {
			t.Errorf("Int(%d) = %d, want %d", n, got, want)
		}
	}
}

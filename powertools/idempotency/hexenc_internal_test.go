package idempotency

import (
	"encoding/hex"
	"testing"
)

func TestEncodeHex(t *testing.T) {
	for n := 0; n <= 40; n++ {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*37 + n*11) // every nibble value turns up
		}
		if n == 40 {
			for i := range src {
				src[i] = byte(i * 7)
			}
		}
		dst := make([]byte, 2*n)
		encodeHex(dst, src)
		if got, want := string(dst), hex.EncodeToString(src); got != want {
			t.Errorf("encodeHex(% x) = %s, want %s", src, got, want)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	dst := make([]byte, 512)
	encodeHex(dst, all)
	if got, want := string(dst), hex.EncodeToString(all); got != want {
		t.Errorf("encodeHex of every byte value = %s, want %s", got, want)
	}
}

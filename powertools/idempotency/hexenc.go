package idempotency

import "encoding/binary"

// encodeHex writes the lowercase hex of src to dst, which must hold
// 2*len(src) bytes, as hex.Encode does. It makes two digits of each byte
// four bytes at a time with arithmetic on a uint64 (SWAR), for the 32 bytes
// of every key's hash and the 16 of every lease token: hex.Encode's loop,
// a table look-up and a bounds check per digit, came to about 900
// instructions per first call.
func encodeHex(dst, src []byte) {
	const lanes = 0x000F000F000F000F // the low nibble of each 16-bit lane
	for len(src) >= 4 {
		// Spread the four bytes into 16-bit lanes: byte k to bits 16k..16k+7.
		v := uint64(binary.LittleEndian.Uint32(src))
		v = (v | v<<16) & 0x0000FFFF0000FFFF
		v = (v | v<<8) & 0x00FF00FF00FF00FF
		// Each lane gets its high nibble in its low byte and its low nibble
		// in its high byte: the digits' order in memory.
		n := (v>>4)&lanes | (v&lanes)<<8
		// A nibble n becomes '0'+n, plus 'a'-'0'-10 = 39 when n >= 10, which
		// is when n+6 carries into bit 4.
		ten := ((n + 0x0606060606060606) >> 4) & 0x0101010101010101
		binary.LittleEndian.PutUint64(dst, n+0x3030303030303030+ten*39)
		src, dst = src[4:], dst[8:]
	}
	for i, c := range src {
		dst[2*i] = hexDigits[c>>4]
		dst[2*i+1] = hexDigits[c&0xF]
	}
}

package responsestore

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
)

// compress returns b gzipped, or b itself when gzip does not make it
// smaller (already compressed data, a short response).
func compress(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	zw.Write(b) //nolint:errcheck // a bytes.Buffer does not fail
	zw.Close()  //nolint:errcheck // nor does its Close
	zw.Reset(io.Discard)
	gzipWriters.Put(zw)
	if buf.Len() >= len(b) {
		return b
	}
	return buf.Bytes()
}

// gzipWriters keeps gzip writers for reuse. A new writer allocates 800 KB
// of tables, and the collections that follow are most of the cost of
// compressing a short response: a 1 KiB response's COMPLETED write took a
// median 655 µs with a new writer each time and 89 µs with the pool, 64 KiB
// 2.5 ms and 2.0 ms (the store's added-cost benchmark, old and new binaries run
// alternately five times on the 2-core machine under load). A reader is
// smaller (40 KB), and is made anew.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzipLevel)
	return zw
}}

// gzipLevel is gzip's default level (6). On 1 MiB of JSON it costs twice
// the instructions of gzip.BestSpeed (93 million against 48) for output a
// quarter smaller (14.9% of the input against 19.9%), and every byte saved
// is a byte less written to and read from DynamoDB (a write unit per KB)
// or S3, which costs far more than the CPU; gzip.BestCompression saves 3%
// more for 2.6 times the instructions. docs/benchmarks.md, "Large and
// sensitive responses", has the figures.
const gzipLevel = gzip.DefaultCompression

// decompress returns the gzip stream b uncompressed, which must be size
// bytes long. It reads no more than that, whatever the stream holds, and
// allocates as the bytes come rather than trusting size.
func decompress(b []byte, size int) ([]byte, error) {
	// A bytes.Reader is an io.ByteReader, so gzip reads no byte past its
	// stream, and what is left after it can be seen.
	in := bytes.NewReader(b)
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, err // "gzip: invalid header"
	}
	zr.Multistream(false)
	// Reading to the end checks the stream's CRC-32 and length.
	out, err := io.ReadAll(io.LimitReader(zr, int64(size)+1))
	switch {
	case err != nil:
		return nil, err // "gzip: invalid checksum", "unexpected EOF"
	case len(out) != size:
		return nil, fmt.Errorf("not the %d bytes the envelope says", size)
	case in.Len() > 0:
		return nil, fmt.Errorf("%d bytes after the stream", in.Len())
	}
	return out, nil
}

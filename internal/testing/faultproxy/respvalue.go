package faultproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The proxy reads just enough RESP to find where each command and each
// reply ends; it passes the bytes on as they came. See
// https://redis.io/docs/latest/develop/reference/protocol-spec/

// maxBulk bounds one bulk string: the server's own default limit
// (proto-max-bulk-len), 512 MB.
const maxBulk = 512 << 20

var errProtocol = errors.New("faultproxy: not RESP")

// readCommand reads one command, an array of bulk strings as clients send
// it, and returns its bytes as sent, its name in upper case and its
// arguments.
func readCommand(r *bufio.Reader) (raw []byte, name string, args [][]byte, err error) {
	line, err := readLine(r)
	if err != nil {
		return nil, "", nil, err
	}
	if line[0] != '*' {
		return nil, "", nil, fmt.Errorf("%w: a command starts with %q, want an array", errProtocol, line[0])
	}
	n, err := length(line)
	if err != nil || n < 1 {
		return nil, "", nil, fmt.Errorf("%w: command of %d parts", errProtocol, n)
	}
	raw = line
	parts := make([][]byte, n)
	for i := range parts {
		start := len(raw)
		if raw, err = readValue(r, raw); err != nil {
			return nil, "", nil, err
		}
		part := raw[start:]
		if part[0] != '$' || len(part) < 5 || part[1] == '-' {
			return nil, "", nil, fmt.Errorf("%w: a command's part is %q, want a bulk string", errProtocol, part)
		}
		// "$<len>\r\n<bytes>\r\n"
		parts[i] = part[bytes.IndexByte(part, '\n')+1 : len(part)-2]
	}
	return raw, upper(parts[0]), parts[1:], nil
}

// readValue appends one RESP2 or RESP3 value, read from r, to buf.
func readValue(r *bufio.Reader, buf []byte) ([]byte, error) {
	line, err := readLine(r)
	if err != nil {
		return buf, err
	}
	buf = append(buf, line...)
	switch line[0] {
	case '+', '-', ':', '_', '#', ',', '(':
		return buf, nil
	case '$', '!', '=': // bulk string, bulk error, verbatim string
		n, err := length(line)
		if err != nil || n < 0 { // $-1: RESP2's null
			return buf, err
		}
		if n > maxBulk {
			return buf, fmt.Errorf("%w: bulk of %d bytes", errProtocol, n)
		}
		start := len(buf)
		buf = append(buf, make([]byte, n+2)...)
		if _, err := io.ReadFull(r, buf[start:]); err != nil {
			return buf, err
		}
		return buf, nil
	case '*', '~', '>', '%', '|': // array, set, push, map, attribute
		n, err := length(line)
		if err != nil || n < 0 { // *-1: RESP2's null array
			return buf, err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		if line[0] == '|' {
			n++ // an attribute comes before the value it describes
		}
		for range n {
			if buf, err = readValue(r, buf); err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	return buf, fmt.Errorf("%w: type byte %q", errProtocol, line[0])
}

// readLine reads up to and including CRLF; the line has at least a type
// byte.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: line longer than %d bytes", errProtocol, r.Size())
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: line %q", errProtocol, line)
	}
	return append([]byte(nil), line...), nil
}

// length reads the number after the type byte of line.
func length(line []byte) (int, error) {
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil {
		return 0, fmt.Errorf("%w: length in %q", errProtocol, line)
	}
	return n, nil
}

func upper(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}

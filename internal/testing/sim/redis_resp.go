package sim

import (
	"bytes"
	"errors"
	"strconv"
)

// This file is RESP (https://redis.io/docs/latest/develop/reference/protocol-spec/),
// as the modelled server reads a client's commands and writes its
// answers: RESP2, or RESP3 once HELLO 3 has asked for it.

// resp is one reply: kind is RESP's type byte ('+' status, '-' error,
// ':' integer, '$' bulk string, '*' array, '%' map, '_' null).
type resp struct {
	kind byte
	str  string
	n    int64
	arr  []resp // an array's elements; a map's keys and values in turn
}

func okReply() resp                { return resp{kind: '+', str: "OK"} }
func errorReply(msg string) resp   { return resp{kind: '-', str: msg} }
func intReply(n int64) resp        { return resp{kind: ':', n: n} }
func bulkReply(s string) resp      { return resp{kind: '$', str: s} }
func nilReply() resp               { return resp{kind: '_'} }
func arrayReply(arr []resp) resp   { return resp{kind: '*', arr: arr} }
func (r resp) isError() bool       { return r.kind == '-' }
func (r resp) errorPrefix() string { return string(bytes.Fields([]byte(r.str + " x"))[0]) }

// appendResp writes r in protocol proto.
func appendResp(b []byte, r resp, proto int) []byte {
	switch r.kind {
	case '+', '-':
		b = append(b, r.kind)
		b = append(b, r.str...)
	case ':':
		b = append(b, ':')
		b = strconv.AppendInt(b, r.n, 10)
	case '$':
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(r.str)), 10)
		b = append(b, "\r\n"...)
		b = append(b, r.str...)
	case '_':
		if proto == 3 {
			b = append(b, '_')
		} else {
			b = append(b, "$-1"...)
		}
	case '*', '%':
		n := len(r.arr)
		if r.kind == '%' && proto == 3 {
			b = append(b, '%')
			n /= 2
		} else {
			b = append(b, '*')
		}
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, "\r\n"...)
		for _, e := range r.arr {
			b = appendResp(b, e, proto)
		}
		return b
	}
	return append(b, "\r\n"...)
}

var errProtocol = errors.New("sim: a command that is not a RESP array of bulk strings")

// parseCommand reads one command from b, an array of bulk strings as
// clients send them. It returns the command and the bytes it took, or 0
// when b does not hold a whole command yet.
func parseCommand(b []byte) ([]string, int, error) {
	line := func(at int) (string, int, bool) {
		i := bytes.Index(b[at:], []byte("\r\n"))
		if i < 0 {
			return "", 0, false
		}
		return string(b[at : at+i]), at + i + 2, true
	}
	if len(b) == 0 {
		return nil, 0, nil
	}
	if b[0] != '*' {
		return nil, 0, errProtocol
	}
	head, at, ok := line(1)
	if !ok {
		return nil, 0, nil
	}
	n, err := strconv.Atoi(head)
	if err != nil || n < 0 {
		return nil, 0, errProtocol
	}
	args := make([]string, 0, n)
	for range n {
		if at >= len(b) {
			return nil, 0, nil
		}
		if b[at] != '$' {
			return nil, 0, errProtocol
		}
		size, next, ok := line(at + 1)
		if !ok {
			return nil, 0, nil
		}
		l, err := strconv.Atoi(size)
		if err != nil || l < 0 {
			return nil, 0, errProtocol
		}
		if next+l+2 > len(b) {
			return nil, 0, nil
		}
		args = append(args, string(b[next:next+l]))
		at = next + l + 2
	}
	return args, at, nil
}

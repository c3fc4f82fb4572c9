package jmespath

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gopowertools/lambda/internal/strictjson"
)

type tokenKind uint8

const (
	tEOF tokenKind = iota
	tUnquoted
	tQuoted
	tLiteral // `json` or 'raw string'
	tNumber
	tDot
	tStar
	tComma
	tColon
	tLbracket
	tRbracket
	tFilter  // [?
	tFlatten // []
	tIndex   // [n]
	tLbrace
	tRbrace
	tLparen
	tRparen
	tPipe
	tOr
	tAnd
	tNot
	tCurrent
	tExpref
	tError // the lexer failed here; lexer.err says why
	tEQ
	tNE
	tLT
	tLTE
	tGT
	tGTE
)

var tokenNames = [...]string{
	tEOF: "end of expression", tUnquoted: "identifier", tQuoted: "quoted identifier",
	tLiteral: "literal", tNumber: "number", tDot: "'.'", tStar: "'*'", tComma: "','",
	tColon: "':'", tLbracket: "'['", tRbracket: "']'", tFilter: "'[?'", tFlatten: "'[]'", tIndex: "index",
	tLbrace: "'{'", tRbrace: "'}'", tLparen: "'('", tRparen: "')'", tPipe: "'|'",
	tOr: "'||'", tAnd: "'&&'", tNot: "'!'", tCurrent: "'@'", tExpref: "'&'", tError: "invalid token",
	tEQ: "'=='", tNE: "'!='", tLT: "'<'", tLTE: "'<='", tGT: "'>'", tGTE: "'>='",
}

func (k tokenKind) String() string { return tokenNames[k] }

// token is one token; its source is src[pos:end].
type token struct {
	kind     tokenKind
	pos, end int
	num      int    // tNumber, tIndex: the number (see readInt)
	name     string // tUnquoted, tQuoted: the name, unescaped
	value    any    // tLiteral: the value
}

// lexer turns an expression into tokens one at a time, on demand, without
// regular expressions and without allocating except for escaped names and
// literal values.
type lexer struct {
	src string
	pos int
	err error // why the lexer stopped, once it returned tError
}

func (lx *lexer) errorf(pos int, msg string) error {
	return &SyntaxError{Expression: lx.src, Offset: pos, Msg: msg}
}

func (lx *lexer) emit(kind tokenKind, start, end int) token {
	lx.pos = end
	return token{kind: kind, pos: start, end: end}
}

// fail records why the lexer stopped at pos, and returns the tError token
// at which the parser reports it.
func (lx *lexer) fail(pos int, msg string) token {
	return lx.check(token{}, lx.errorf(pos, msg))
}

// check turns the result of a scan that can fail into a token.
func (lx *lexer) check(t token, err error) token {
	if err != nil {
		lx.err = err
		return token{kind: tError, pos: lx.pos}
	}
	return t
}

// peek returns the byte after the current one, or 0.
func (lx *lexer) peek() byte {
	if lx.pos+1 < len(lx.src) {
		return lx.src[lx.pos+1]
	}
	return 0
}

// scan returns the next token; at the end it returns tEOF, every time.
func (lx *lexer) scan() token {
	src := lx.src
	for lx.pos < len(src) && isSpace(src[lx.pos]) {
		lx.pos++
	}
	p := lx.pos
	if p >= len(src) {
		return lx.emit(tEOF, p, p)
	}
	c := src[p]
	switch {
	case isIdentStart(c):
		end := p + 1
		for end < len(src) && isIdentPart(src[end]) {
			end++
		}
		lx.pos = end
		return token{kind: tUnquoted, pos: p, end: end, name: src[p:end]}
	case c == '-' || isDigit(c):
		return lx.number()
	}
	switch c {
	case '.':
		return lx.emit(tDot, p, p+1)
	case '*':
		return lx.emit(tStar, p, p+1)
	case ',':
		return lx.emit(tComma, p, p+1)
	case ':':
		return lx.emit(tColon, p, p+1)
	case ']':
		return lx.emit(tRbracket, p, p+1)
	case '{':
		return lx.emit(tLbrace, p, p+1)
	case '}':
		return lx.emit(tRbrace, p, p+1)
	case '(':
		return lx.emit(tLparen, p, p+1)
	case ')':
		return lx.emit(tRparen, p, p+1)
	case '@':
		return lx.emit(tCurrent, p, p+1)
	case '[':
		return lx.bracket()
	case '|':
		return lx.two('|', tOr, tPipe)
	case '&':
		return lx.two('&', tAnd, tExpref)
	case '!':
		return lx.two('=', tNE, tNot)
	case '<':
		return lx.two('=', tLTE, tLT)
	case '>':
		return lx.two('=', tGTE, tGT)
	case '=':
		if lx.peek() != '=' {
			return lx.fail(p, "'=' is not an operator; use '=='")
		}
		return lx.emit(tEQ, p, p+2)
	case '"':
		return lx.check(lx.quoted())
	case '\'':
		return lx.check(lx.rawString())
	case '`':
		return lx.check(lx.literal())
	}
	r, _ := utf8.DecodeRuneInString(src[p:])
	return lx.fail(p, "unexpected character "+strconv.QuoteRune(r))
}

// two emits long when the next byte is second, else short.
func (lx *lexer) two(second byte, long, short tokenKind) token {
	if lx.peek() == second {
		return lx.emit(long, lx.pos, lx.pos+2)
	}
	return lx.emit(short, lx.pos, lx.pos+1)
}

func (lx *lexer) number() token {
	start := lx.pos
	val, end, msg := readInt(lx.src, start)
	if msg != "" {
		return lx.fail(start, msg+hyphenHint(lx.src, start))
	}
	lx.pos = end
	return token{kind: tNumber, pos: start, end: end, num: val}
}

// hyphenHint is what a syntax error at a '-' at src[at] adds when the
// '-' joins two parts of a name, as in headers.idempotency-key: JMESPath
// reads it as a minus, and the name has to be quoted.
func hyphenHint(src string, at int) string {
	isName := func(c byte) bool { return c == '_' || isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' }
	if src[at] != '-' || at == 0 || !isName(src[at-1]) || at+1 == len(src) || !isName(src[at+1]) {
		return ""
	}
	start, end := at, at
	for start > 0 && isName(src[start-1]) {
		start--
	}
	for end < len(src) && (isName(src[end]) || src[end] == '-') {
		end++
	}
	name := src[start:end]
	if isDigit(name[0]) {
		return ""
	}
	return fmt.Sprintf(`; a name with '-' in it must be quoted: %s"%s"%s`, src[:start], name, src[end:])
}

// bracket reads the '[' at lx.pos. "[n]", written without spaces, the
// usual index, is read as one tIndex token with n in its num: one token
// where "[", "n" and "]" took three.
func (lx *lexer) bracket() token {
	p := lx.pos
	switch c := lx.peek(); {
	case c == '?':
		return lx.emit(tFilter, p, p+2)
	case c == ']':
		return lx.emit(tFlatten, p, p+2)
	case c == '-' || isDigit(c):
		val, end, msg := readInt(lx.src, p+1)
		if msg == "" && end < len(lx.src) && lx.src[end] == ']' {
			lx.pos = end + 1
			return token{kind: tIndex, pos: p, end: end + 1, num: val}
		}
	}
	return lx.emit(tLbracket, p, p+1)
}

// readInt reads the integer at src[start:], up to end. It returns its
// value clamped to the int32 range: a number serves as an index or a
// slice bound, and no array has 2^31 elements, so the clamped value selects
// what the written one would. msg says why text is not a number; numbers
// beyond int64 are refused, as strconv.Atoi would.
func readInt(src string, start int) (val, end int, msg string) {
	end = start
	neg := src[end] == '-'
	if neg {
		end++
	}
	digits := end
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var v uint64
	for ; end < len(src) && isDigit(src[end]); end++ {
		d := uint64(src[end] - '0')
		if v > (limit-d)/10 {
			return 0, end, "number out of range"
		}
		v = v*10 + d
	}
	if end == digits {
		return 0, end, "'-' must be followed by digits"
	}
	if neg {
		return -int(min(v, -math.MinInt32)), end, ""
	}
	return int(min(v, math.MaxInt32)), end, ""
}

// delimited returns the text between the delimiter at lx.pos and the next
// unescaped one; a backslash keeps the byte after it, so an escaped
// delimiter does not end the text. It reports whether any backslash was seen.
func (lx *lexer) delimited(delim byte) (text string, escaped bool, err error) {
	src, start := lx.src, lx.pos
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			escaped = true
			i++
		case delim:
			lx.pos = i + 1
			return src[start+1 : i], escaped, nil
		}
	}
	return "", false, lx.errorf(start, "unterminated "+string(delim)+"-quoted text")
}

func (lx *lexer) quoted() (token, error) {
	start := lx.pos
	text, escaped, err := lx.delimited('"')
	if err != nil {
		return token{}, err
	}
	t := token{kind: tQuoted, pos: start, end: lx.pos, name: text}
	if escaped || !isPlainJSONString(text) {
		var ok bool
		if t.name, ok = unquoteJSON(`"` + text + `"`); !ok {
			return token{}, lx.errorf(start, "invalid quoted identifier")
		}
	}
	return t, nil
}

// rawString follows jmespath.py: only \' is an escape; every other
// backslash, including \\, is kept as it is.
func (lx *lexer) rawString() (token, error) {
	start := lx.pos
	text, escaped, err := lx.delimited('\'')
	if err != nil {
		return token{}, err
	}
	if escaped {
		text = strings.ReplaceAll(text, `\'`, `'`)
	}
	return token{kind: tLiteral, pos: start, end: lx.pos, value: text}, nil
}

// literal decodes `json`. As in jmespath.py, text that is not JSON is tried
// once more as the body of a JSON string (the deprecated `foo` form).
func (lx *lexer) literal() (token, error) {
	start := lx.pos
	text, escaped, err := lx.delimited('`')
	if err != nil {
		return token{}, err
	}
	if escaped {
		text = strings.ReplaceAll(text, "\\`", "`")
	}
	v, err := strictjson.Decode([]byte(text), nil)
	if err != nil {
		s, sok := unquoteJSON(`"` + strings.TrimLeft(text, " \t\n\r") + `"`)
		if !sok {
			return token{}, lx.errorf(start, "invalid JSON literal")
		}
		v = s
	}
	return token{kind: tLiteral, pos: start, end: lx.pos, value: v}, nil
}

// unquoteJSON decodes the JSON string q, quotes included.
func unquoteJSON(q string) (string, bool) {
	v, err := strictjson.Decode([]byte(q), nil)
	s, ok := v.(string)
	return s, err == nil && ok
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

// isPlainJSONString reports whether s, which holds no quote and no
// backslash, placed between quotes is a JSON string that decodes to itself.
func isPlainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' {
			return false
		}
	}
	return utf8.ValidString(s)
}

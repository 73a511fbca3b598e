package telemetry

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// JSONScan reads one JSON text in a single pass, field by field, for
// parsers that need a few fields of long lines: the caller walks the
// objects it cares about (Object, Key) and reads or skips each value;
// everything skipped is still checked, so a text the scan accepts is
// valid JSON as encoding/json sees it (json.Valid), and the values read
// are what json.Unmarshal would store.
//
// The scan never guesses. Bad is set, and the caller must then decode the
// text with encoding/json instead, when the text is not valid JSON, when a
// value read has a type the reader does not accept (a string field given a
// number: json.Unmarshal reports that), when an integer does not fit, or
// when nesting passes 512 levels. Callers add their own cases (a key that
// matches a field only case-insensitively, a key seen twice) with Fail.
//
// Strings are scanned eight bytes at a time; nothing is allocated except
// for a string value that holds an escape and is read with Text.
type JSONScan struct {
	b     []byte
	i     int
	depth int
	open  bool // just after '{' or '[': no comma before the next member
	// Bad reports that the scan gave up (see JSONScan).
	Bad bool
}

const maxScanDepth = 512

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// Reset starts scanning b.
func (s *JSONScan) Reset(b []byte) { *s = JSONScan{b: b} }

// Pos returns the offset of the next value (after white space).
func (s *JSONScan) Pos() int {
	s.ws()
	return s.i
}

// Since returns the text from offset pos (a Pos) to where the scan is.
func (s *JSONScan) Since(pos int) []byte { return s.b[pos:s.i] }

// Fail marks the scan bad.
func (s *JSONScan) Fail() { s.Bad = true }

func (s *JSONScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Peek returns the first byte of the next value: '{', '[', '"', 't', 'f',
// 'n', '-' or a digit; 0 at the end of the text or once the scan is bad.
func (s *JSONScan) Peek() byte {
	s.ws()
	if s.Bad || s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// End reports whether only white space is left after the value read, as
// a whole JSON text needs; otherwise the scan is bad.
func (s *JSONScan) End() bool {
	s.ws()
	if s.i != len(s.b) {
		s.Bad = true
	}
	return !s.Bad
}

func (s *JSONScan) enter(c byte) bool {
	if s.Peek() != c {
		s.Bad = true
		return false
	}
	s.i++
	s.depth++
	if s.depth > maxScanDepth {
		s.Bad = true
		return false
	}
	s.open = true
	return true
}

// Object starts reading an object; it reports false (and the scan is bad)
// when the next value is not one. Read its members with Key.
func (s *JSONScan) Object() bool { return s.enter('{') }

// Array starts reading an array; it reports false (and the scan is bad)
// when the next value is not one. Read its elements with Elem.
func (s *JSONScan) Array() bool { return s.enter('[') }

// member moves past the separator before the next member of the object or
// array being read; it reports false at its closing byte (consumed).
func (s *JSONScan) member(close byte) bool {
	s.ws()
	if s.Bad || s.i >= len(s.b) {
		s.Bad = true
		return false
	}
	c := s.b[s.i]
	if c == close {
		s.i++
		s.depth--
		s.open = false
		return false
	}
	if c == ',' {
		if s.open {
			s.Bad = true
			return false
		}
		s.i++
		s.ws()
	} else if !s.open {
		s.Bad = true
		return false
	}
	s.open = false
	return true
}

// Key reads the next key of the object being read and the colon after it;
// ok is false at the object's end (or once the scan is bad). key is the
// raw text between the quotes; plain reports that it is also the decoded
// key (no escape, only ASCII). The caller reads or skips the value next.
func (s *JSONScan) Key() (key []byte, plain, ok bool) {
	if !s.member('}') {
		return nil, false, false
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.Bad = true
		return nil, false, false
	}
	start := s.i + 1
	esc, high := s.str()
	key = s.b[start:max(start, s.i-1)]
	s.ws()
	if s.Bad || s.i >= len(s.b) || s.b[s.i] != ':' {
		s.Bad = true
		return nil, false, false
	}
	s.i++
	return key, !esc && !high, true
}

// Elem reports whether the array being read has another element (read or
// skip it next); false at its end (or once the scan is bad).
func (s *JSONScan) Elem() bool { return s.member(']') }

// str moves past the string starting at s.i (its opening quote),
// reporting whether it holds an escape or a byte of 0x80 and up.
func (s *JSONScan) str() (esc, high bool) {
	b := s.b
	i := s.i + 1
	var hi uint64
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q := x ^ (swarLo * '"')
			bs := x ^ (swarLo * '\\')
			t := ((q - swarLo) &^ q) | ((bs - swarLo) &^ bs) | ((x - swarLo*0x20) &^ x)
			if t &= swarHi; t != 0 {
				n := bits.TrailingZeros64(t) >> 3
				hi |= x & (1<<(8*n) - 1) & swarHi
				i += n
				break
			}
			hi |= x & swarHi
			i += 8
		}
		if i >= len(b) {
			s.Bad = true
			s.i = len(b)
			return
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return esc, high || hi != 0
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				s.Bad = true
				s.i = len(b)
				return
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					s.Bad = true
					s.i = len(b)
					return
				}
				i += 6
			default:
				s.Bad = true
				s.i = len(b)
				return
			}
		case c < 0x20:
			s.Bad = true
			s.i = len(b)
			return
		default:
			if c >= 0x80 {
				high = true
			}
			i++
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number moves past the number at s.i (JSON's grammar, as encoding/json
// checks it).
func (s *JSONScan) number() {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		s.Bad = true
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			s.Bad = true
			return
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			s.Bad = true
			return
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	s.i = i
}

func (s *JSONScan) literal(word string) {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		s.Bad = true
		return
	}
	s.i += len(word)
}

// Skip moves past the next value, checking it, and returns it as raw
// bytes (what a json.RawMessage field would hold).
func (s *JSONScan) Skip() []byte {
	start := s.i
	switch s.Peek() {
	case '{':
		start = s.i
		if s.Object() {
			for _, _, ok := s.Key(); ok; _, _, ok = s.Key() {
				s.Skip()
			}
		}
	case '[':
		start = s.i
		if s.Array() {
			for s.Elem() {
				s.Skip()
			}
		}
	case '"':
		start = s.i
		s.str()
	case 't':
		start = s.i
		s.literal("true")
	case 'f':
		start = s.i
		s.literal("false")
	case 'n':
		start = s.i
		s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		start = s.i
		s.number()
	default:
		s.Bad = true
	}
	if s.Bad {
		return nil
	}
	return s.b[start:s.i]
}

// RawString reads a string without decoding it: raw is the text
// between the quotes, plain reports that it is also the decoded string
// (no escape, valid UTF-8). Any other type makes the scan bad.
func (s *JSONScan) RawString() (raw []byte, plain bool) {
	if s.Peek() != '"' {
		s.Bad = true
		return nil, false
	}
	start := s.i
	esc, high := s.str()
	if s.Bad {
		return nil, false
	}
	raw = s.b[start+1 : s.i-1]
	return raw, !esc && (!high || utf8.Valid(raw))
}

// Null moves past a null and reports true when the next value is one;
// otherwise it reads nothing.
func (s *JSONScan) Null() bool {
	if s.Peek() != 'n' {
		return false
	}
	s.literal("null")
	return !s.Bad
}

// Text reads a string or null as json.Unmarshal into a string field does:
// null reports null and leaves the field as it was; any other type makes
// the scan bad. The bytes are the decoded string: a slice of the text when
// it needs no decoding (the usual case), else a new decoded copy.
func (s *JSONScan) Text() (v []byte, null bool) {
	switch s.Peek() {
	case '"':
	case 'n':
		return nil, s.Null()
	default:
		s.Bad = true
		return nil, false
	}
	start := s.i
	esc, high := s.str()
	if s.Bad {
		return nil, false
	}
	raw := s.b[start+1 : s.i-1]
	if !esc && (!high || utf8.Valid(raw)) {
		return raw, false
	}
	var str string
	if json.Unmarshal(s.b[start:s.i], &str) != nil {
		s.Bad = true
		return nil, false
	}
	return []byte(str), false
}

// Bool reads true, false or null as json.Unmarshal into a bool field
// does; any other type makes the scan bad.
func (s *JSONScan) Bool() (v, null bool) {
	switch s.Peek() {
	case 't':
		s.literal("true")
		return true, false
	case 'f':
		s.literal("false")
		return false, false
	case 'n':
		return false, s.Null()
	}
	s.Bad = true
	return false, false
}

// Int reads an integer or null as json.Unmarshal into an int64 field
// does. A number with a fraction or an exponent, or one of more than 18
// digits, makes the scan bad (encoding/json rejects the first and may
// reject the last), as does any other type.
func (s *JSONScan) Int() (v int64, null bool) {
	switch c := s.Peek(); {
	case c == 'n':
		return 0, s.Null()
	case c != '-' && !isDigit(c):
		s.Bad = true
		return 0, false
	}
	start := s.i
	s.number()
	if s.Bad {
		return 0, false
	}
	d := s.b[start:s.i]
	neg := d[0] == '-'
	if neg {
		d = d[1:]
	}
	if len(d) > 18 {
		s.Bad = true
		return 0, false
	}
	for _, c := range d {
		if !isDigit(c) {
			s.Bad = true
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, false
}

// FoldsTo reports whether key matches name only the way encoding/json's
// case-insensitive field matching does (equal ignoring ASCII case, but not
// equal): decoding such a line is left to encoding/json. key must be
// plain (see Key).
func FoldsTo(key []byte, name string) bool {
	if len(key) != len(name) || string(key) == name {
		return false
	}
	for i := range len(key) {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// Helpers for a parser's one-pass reader: each field it reads once, into
// its destination, leaving anything it cannot be sure of to
// encoding/json (Fail).

// UnreadKey handles a key the one-pass reader does not read: one that
// only encoding/json's case-insensitive matching would take for one of
// names, or one with an escape or a non-ASCII byte (which might decode or
// fold to such a name), fails the scan.
func (s *JSONScan) UnreadKey(key []byte, plain bool, names []string) {
	if !plain {
		s.Fail()
		return
	}
	for _, n := range names {
		if FoldsTo(key, n) {
			s.Fail()
			return
		}
	}
}

// Once marks field bit f read in seen, failing the scan when it was read
// before (encoding/json would take the last copy; the one-pass reader
// does not try).
func (s *JSONScan) Once(seen *uint32, f uint32) {
	if *seen&f != 0 {
		s.Fail()
	}
	*seen |= f
}

// TextTo reads a string into dst, leaving dst as it was for null.
func (s *JSONScan) TextTo(dst *[]byte) {
	if v, null := s.Text(); !null {
		*dst = v
	}
}

// BoolTo reads a boolean into dst, leaving dst as it was for null.
func (s *JSONScan) BoolTo(dst *bool) {
	if v, null := s.Bool(); !null {
		*dst = v
	}
}

// IntTo reads an integer into dst, leaving dst as it was for null.
func (s *JSONScan) IntTo(dst *int64) {
	if v, null := s.Int(); !null {
		*dst = v
	}
}

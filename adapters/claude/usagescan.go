package claude

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/lifeloop/lifeloop/telemetry"
)

// usageLine is what `lifeloop usage` reads of a transcript line holding
// tokens. Byte fields point into the line.
type usageLine struct {
	typ, sessionID, timestamp, requestID, msgID, model []byte
	hasMessage, hasUsage, usageRead                    bool
	input, cc, cr, out                                 int64
}

// scanUsageLine reads the fields of a model call from data, skipping
// every other value by its quotes and brackets alone (a value it skips is
// not checked, so a line broken only inside one still counts). It returns
// false, leaving the line to the transcript's parser, for anything that
// parser decides otherwise: a key with an escape or one encoding/json
// would match to a needed field in another case, a needed field given
// twice, not a plain string, or a token count not plain digits, and any
// line not one object.
func scanUsageLine(data []byte, l *usageLine) bool {
	s := usageScan{b: data}
	if !s.byte('{') {
		return false
	}
	var seen uint8
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.once(&seen, 1) && s.text(&l.typ)
		case "sessionId":
			return s.once(&seen, 2) && s.text(&l.sessionID)
		case "timestamp":
			return s.once(&seen, 4) && s.text(&l.timestamp)
		case "requestId":
			return s.once(&seen, 8) && s.text(&l.requestID)
		case "message":
			if !s.once(&seen, 16) {
				return false
			}
			if s.null() {
				return true
			}
			if !s.byte('{') {
				return false
			}
			l.hasMessage = true
			return s.message(l)
		}
		return s.other(key, &lineNames)
	})
	s.ws()
	return ok && s.i == len(s.b)
}

func (s *usageScan) message(l *usageLine) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.once(&seen, 1) && s.text(&l.msgID)
		case "model":
			return s.once(&seen, 2) && s.text(&l.model)
		case "usage":
			if !s.once(&seen, 4) {
				return false
			}
			if s.null() {
				return true
			}
			if !s.byte('{') {
				return false
			}
			l.hasUsage = true
			return s.usage(l)
		}
		return s.other(key, &messageNames)
	})
}

func (s *usageScan) usage(l *usageLine) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			l.usageRead = true
			return s.once(&seen, 1) && s.int(&l.input)
		case "cache_creation_input_tokens":
			return s.once(&seen, 2) && s.int(&l.cc)
		case "cache_read_input_tokens":
			return s.once(&seen, 4) && s.int(&l.cr)
		case "output_tokens":
			l.usageRead = true
			return s.once(&seen, 8) && s.int(&l.out)
		}
		return s.other(key, &usageNames)
	})
}

// The keys scanUsageLine reads, of the line and of its message (the
// usage's are usageKeys).
var (
	lineNames    = namesOf([]string{"type", "sessionId", "timestamp", "requestId", "message"})
	messageNames = namesOf([]string{"id", "model", "usage"})
	usageNames   = namesOf(usageKeys)
)

// usageScan walks a line's bytes.
type usageScan struct {
	b []byte
	i int
}

func (s *usageScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c after any space.
func (s *usageScan) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true // no space before it: the harness writes none
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads the members of an object whose { was read, calling
// member at each value; false when member does or the object is broken.
func (s *usageScan) object(member func(key []byte) bool) bool {
	if s.byte('}') {
		return true
	}
	for {
		if !s.byte('"') {
			return false
		}
		start := s.i
		ok, plain := s.skipString()
		if !ok {
			return false
		}
		key := s.b[start : s.i-1]
		if !plain && !plainText(key) || !s.byte(':') {
			return false
		}
		if s.i < len(s.b) && s.b[s.i] <= ' ' {
			s.ws()
		}
		if !member(key) {
			return false
		}
		if s.byte(',') {
			continue
		}
		return s.byte('}')
	}
}

// other skips the value of a key no field needs, unless encoding/json
// would take the key (plain ASCII: see plainText) for one of names.
func (s *usageScan) other(key []byte, names *keyNames) bool {
	if len(key) < 64 && names.lens&(1<<len(key)) != 0 {
		for _, n := range names.names {
			if telemetry.FoldsTo(key, n) {
				return false
			}
		}
	}
	return s.skip()
}

// keyNames are the keys of an object a scan reads, and a bit for each
// of their lengths (all under 64): a key of another length cannot be
// taken for one of them.
type keyNames struct {
	names []string
	lens  uint64
}

func namesOf(names []string) keyNames {
	k := keyNames{names: names}
	for _, n := range names {
		k.lens |= 1 << len(n)
	}
	return k
}

// plainText reports whether a string's bytes are its value as
// encoding/json decodes it, and a key only it matches alike: no escape,
// and ASCII only (encoding/json folds some other letters to ASCII ones
// when it matches keys, and stores an invalid UTF-8 byte as U+FFFD).
func plainText(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

func (s *usageScan) once(seen *uint8, f uint8) bool {
	if *seen&f != 0 {
		return false
	}
	*seen |= f
	return true
}

// null consumes a null value.
func (s *usageScan) null() bool {
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// text reads a string without escapes into dst.
func (s *usageScan) text(dst *[]byte) bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	s.i++
	start := s.i
	ok, plain := s.skipString()
	if !ok {
		return false
	}
	v := s.b[start : s.i-1]
	if !plain && !plainText(v) {
		return false
	}
	*dst = v
	return true
}

// int reads a number of plain digits into dst.
func (s *usageScan) int(dst *int64) bool {
	var v int64
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && s.i-start < 18 {
		v = v*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	if s.i == start || s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return false
	}
	*dst = v
	return true
}

// skipString moves past the closing quote of a string whose opening
// quote was read. It reports false for a string that does not end, and
// plain true for one it saw holds neither a backslash nor a byte of 0x80
// and up (false: it may; see plainText).
//
// The first bytes are looked at eight at a time in a word (most of a
// line's strings are short keys and ids, for which a call to
// bytes.IndexByte costs more than the looking); a longer string is left
// to bytes.IndexByte.
func (s *usageScan) skipString() (ok, plain bool) {
	b, i := s.b, s.i
	var high uint64
	escaped := false
	for end := min(len(b), i+swarBytes); i+8 <= end; {
		w := binary.LittleEndian.Uint64(b[i:])
		m := zeroBytes(w^quotes) | zeroBytes(w^backslashes)
		if m == 0 {
			high |= w
			i += 8
			continue
		}
		n := bits.TrailingZeros64(m) / 8
		high |= w & (1<<(8*n) - 1)
		i += n
		if b[i] == '"' {
			s.i = i + 1
			return true, !escaped && high&(ones*0x80) == 0
		}
		escaped = true
		i += 2 // the backslash and the byte it escapes
	}
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			s.i = len(b)
			return false, false
		}
		i += j + 1
		n := 0
		for k := i - 2; k >= s.i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			s.i = i
			return true, false
		}
	}
}

// swarBytes is how far skipString looks a word at a time.
const swarBytes = 64

const (
	ones        = 0x0101010101010101
	quotes      = ones * '"'
	backslashes = ones * '\\'
)

// zeroBytes has the high bit set of the lowest zero byte of w (and maybe
// of bytes above it, never below).
func zeroBytes(w uint64) uint64 { return (w - ones) &^ w & (ones * 0x80) }

// skip moves past a value: a string, or an object or array to its
// matching bracket, or a literal to the next delimiter.
func (s *usageScan) skip() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		s.i++
		ok, _ := s.skipString()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			c := s.b[s.i]
			s.i++
			switch c {
			case '"':
				if ok, _ := s.skipString(); !ok {
					return false
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return true
				}
			}
		}
		return false
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.i > start
		}
		s.i++
	}
	return false
}

package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxLineBytes caps one ledger line (one encoded receipt plus its newline).
// Receipts are bounded by the contract; Append refuses larger ones and the
// readers report longer lines as invalid instead of buffering them.
const MaxLineBytes = 1 << 20

// lineHead is the part of a ledger line the ledger itself needs. Decoding
// into it is cheaper than a full receipt decode.
type lineHead struct {
	Sequence       *uint64 `json:"sequence"`
	ReceiptID      string  `json:"receipt_id"`
	IdempotencyKey *string `json:"idempotency_key"`
	ClientID       string  `json:"client_id"`
	AdapterID      string  `json:"adapter_id"`
}

// errNoSequence marks a line that is JSON but carries no sequence.
var errNoSequence = errors.New("receipt has no sequence")

// parseHead decodes the head of one ledger line (without its newline).
//
// It is on every hot path (opening a ledger reads every line, the reader's
// binary search parses a line per probe), so instead of encoding/json it
// walks the top-level object once with scanTop and decodes only the five
// values it needs. It does not validate the rest of the line: Verify and
// the readers decode fully.
func parseHead(line []byte) (lineHead, error) {
	var h lineHead
	var bad error
	ok := scanTop(line, func(rawKey, val []byte) bool {
		key := string(rawKey)
		if bytes.IndexByte(rawKey, '\\') >= 0 {
			k, err := rawString(append(append([]byte{'"'}, rawKey...), '"'))
			if err != nil {
				bad = fmt.Errorf("key %s: %w", rawKey, err)
				return false
			}
			key = k
		}
		var err error
		switch key {
		case "sequence":
			if string(val) == "null" {
				h.Sequence = nil
				break
			}
			var n uint64
			n, err = strconv.ParseUint(string(val), 10, 64)
			h.Sequence = &n
		case "receipt_id":
			h.ReceiptID, err = rawString(val)
		case "idempotency_key":
			if string(val) == "null" {
				h.IdempotencyKey = nil
				break
			}
			var k string
			k, err = rawString(val)
			h.IdempotencyKey = &k
		case "client_id":
			h.ClientID, err = rawString(val)
		case "adapter_id":
			h.AdapterID, err = rawString(val)
		}
		if err != nil {
			bad = fmt.Errorf("field %s: %w", key, err)
			return false
		}
		return true
	})
	if bad != nil {
		return h, bad
	}
	if !ok {
		return h, errors.New("not a JSON object")
	}
	if h.Sequence == nil || *h.Sequence == 0 {
		return h, errNoSequence
	}
	return h, nil
}

// rawString decodes a raw JSON string value.
func rawString(val []byte) (string, error) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", errors.New("not a string")
	}
	if bytes.IndexByte(val, '\\') < 0 {
		return string(val[1 : len(val)-1]), nil
	}
	var s string
	err := json.Unmarshal(val, &s)
	return s, err
}

// scanTop walks the members of the JSON object in line and calls fn with
// each top-level key (raw, without quotes; keys with escapes are passed
// as written) and its raw value, until fn returns false. It returns false
// when line does not have the shape of a JSON object; it checks structure
// (strings, nesting, separators), not the spelling of numbers and literals.
func scanTop(line []byte, fn func(key, val []byte) bool) bool {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return skipSpace(line, i+1) == len(line)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return false
		}
		end := stringEnd(line, i)
		if end < 0 {
			return false
		}
		key := line[i+1 : end-1]
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		vend := valueEnd(line, i)
		if vend < 0 {
			return false
		}
		if !fn(key, line[i:vend]) {
			return true
		}
		i = skipSpace(line, vend)
		if i >= len(line) {
			return false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return skipSpace(line, i+1) == len(line)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at b[i] == '"',
// or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index after the JSON value starting at b[i], or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// rawLine is one newline-terminated line of the ledger file.
type rawLine struct {
	Offset int64  // byte offset of the line's first byte
	Data   []byte // the line without its newline; nil when TooLong
	Len    int64  // bytes the line occupies, newline included
	// TooLong is set when the line exceeds MaxLineBytes; Data is then nil.
	TooLong bool
}

// lineScanner reads newline-terminated lines from r, which starts at file
// offset base. Bytes after the last newline (a torn tail, or a line still
// being written) are never returned as a line; Tail reports them.
type lineScanner struct {
	r      io.Reader
	buf    []byte
	beg    int // start of unread data in buf
	end    int // end of data in buf
	off    int64
	eof    bool
	err    error
	long   bool // currently skipping an over-long line
	lstart int64
}

func newLineScanner(r io.Reader, base int64) *lineScanner {
	return newLineScannerSize(r, base, 64<<10)
}

// newLineScannerSize starts with a bufSize buffer (it grows for long lines).
func newLineScannerSize(r io.Reader, base int64, bufSize int) *lineScanner {
	return &lineScanner{r: r, buf: make([]byte, bufSize), off: base}
}

// Next returns the next complete line, or ok=false at the end of complete
// lines (check Err and Tail).
func (s *lineScanner) Next() (rawLine, bool) {
	for {
		if i := bytes.IndexByte(s.buf[s.beg:s.end], '\n'); i >= 0 {
			data := s.buf[s.beg : s.beg+i]
			if s.long {
				ln := rawLine{Offset: s.lstart, Len: s.off + int64(i) + 1 - s.lstart, TooLong: true}
				s.long = false
				s.advance(i + 1)
				return ln, true
			}
			ln := rawLine{Offset: s.off, Data: data, Len: int64(i) + 1}
			if ln.Len > MaxLineBytes {
				ln.Data, ln.TooLong = nil, true
			}
			s.advance(i + 1)
			return ln, true
		}
		if s.eof || s.err != nil {
			return rawLine{}, false
		}
		// No newline in the buffered data: make room and read more.
		pending := s.end - s.beg
		if s.long || pending >= MaxLineBytes {
			// Over-long line: drop what is buffered, remember where it began.
			if !s.long {
				s.long, s.lstart = true, s.off
			}
			s.off += int64(pending)
			s.beg, s.end = 0, 0
		} else if s.beg > 0 {
			copy(s.buf, s.buf[s.beg:s.end])
			s.beg, s.end = 0, pending
		}
		if s.end == len(s.buf) {
			nb := make([]byte, min(2*len(s.buf), MaxLineBytes+1))
			copy(nb, s.buf[:s.end])
			s.buf = nb
		}
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			s.err = err
		}
	}
}

func (s *lineScanner) advance(n int) {
	s.beg += n
	s.off += int64(n)
}

// Offset is the file offset just after the last complete line returned.
func (s *lineScanner) Offset() int64 {
	if s.long {
		return s.lstart
	}
	return s.off
}

// Tail is the number of bytes after the last complete line, valid once
// Next returned false without an error.
func (s *lineScanner) Tail() int64 {
	if s.long {
		return s.off - s.lstart + int64(s.end-s.beg)
	}
	return int64(s.end - s.beg)
}

// Err is the first read error other than io.EOF.
func (s *lineScanner) Err() error { return s.err }

// LineError describes a ledger line that is not a valid receipt.
type LineError struct {
	Offset int64 // byte offset of the line
	Err    error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("ledger line at byte %d: %v", e.Offset, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

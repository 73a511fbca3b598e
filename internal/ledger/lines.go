package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
func parseHead(line []byte) (lineHead, error) {
	var h lineHead
	if len(line) == 0 || line[0] != '{' {
		return h, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return h, err
	}
	if h.Sequence == nil || *h.Sequence == 0 {
		return h, errNoSequence
	}
	return h, nil
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

package telemetry

import "bytes"

// splitter cuts a byte stream into lines with a bounded buffer.
//
// A line longer than max bytes (without its newline) is never buffered in
// full: once the limit is passed the splitter reports it once as
// over-long and discards bytes until the next newline.
type splitter struct {
	max      int
	buf      []byte // bytes of the current, unfinished line
	start    int64  // file offset of the current line's first byte
	skipping bool   // inside an over-long line, discarding until '\n'
}

// splitFunc receives a complete line (without '\n' or a trailing '\r') and
// the file offset of its first byte. overlong is true when the line passed
// the limit; line is then nil and n is the number of bytes seen so far.
type splitFunc func(line []byte, off int64, overlong bool, n int64)

// reset forgets any partial line; the next byte fed starts a line at off.
func (s *splitter) reset(off int64) {
	s.buf = s.buf[:0]
	s.start = off
	s.skipping = false
}

// pending reports how many bytes of an unfinished line are buffered.
func (s *splitter) pending() int { return len(s.buf) }

// feed splits p, whose first byte sits at file offset off. Lines are handed
// to fn; the slice passed to fn is only valid during the call.
func (s *splitter) feed(p []byte, off int64, fn splitFunc) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.absorb(p, fn)
			return
		}
		switch {
		case len(s.buf) == 0 && !s.skipping:
			// The whole line is in p: hand it over without copying it.
			s.whole(p[:i], fn)
		default:
			s.absorb(p[:i], fn)
			if s.skipping {
				s.skipping = false
				break
			}
			line := s.buf
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			fn(line, s.start, false, int64(len(line)))
		}
		s.buf = s.buf[:0]
		off += int64(i) + 1
		s.start = off
		p = p[i+1:]
	}
}

// whole hands fn a line that lies entirely in one fed chunk, with the
// same limit and '\r' handling as a line assembled in buf.
func (s *splitter) whole(line []byte, fn splitFunc) {
	if len(line) > s.max {
		fn(nil, s.start, true, int64(len(line)))
		return
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	fn(line, s.start, false, int64(len(line)))
}

// absorb adds bytes without a newline to the current line.
func (s *splitter) absorb(p []byte, fn splitFunc) {
	if s.skipping || len(p) == 0 {
		return
	}
	if len(s.buf)+len(p) > s.max {
		n := int64(len(s.buf) + len(p))
		s.buf = s.buf[:0]
		s.skipping = true
		fn(nil, s.start, true, n)
		return
	}
	s.buf = append(s.buf, p...)
}

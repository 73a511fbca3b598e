package ptyio

import "bytes"

// readyText finds a text in a program's terminal output, as a person
// reads it off the screen: escape sequences, control characters and
// whitespace are skipped (a TUI moves the cursor between words instead of
// printing spaces). Feed it the output in order; it is not safe for
// concurrent use.
type readyText struct {
	want  []byte // the text, whitespace removed
	tail  []byte // the visible output's last bytes, whitespace removed
	state escState
	found bool
}

// escState is where the scanner is in an escape sequence.
type escState uint8

const (
	escNone      escState = iota
	escStart              // after ESC
	escCSI                // ESC [ … final byte 0x40–0x7e
	escString             // ESC ] / P / _ / ^ … BEL or ESC \
	escStringEsc          // ESC inside a string: ends it on \
)

func newReadyText(text string) *readyText {
	want := bytes.Join(bytes.Fields([]byte(text)), nil)
	if len(want) == 0 {
		return nil
	}
	return &readyText{want: want, tail: make([]byte, 0, 2*len(want))}
}

// feed scans p and reports whether the text has been seen so far.
func (r *readyText) feed(p []byte) bool {
	for _, b := range p {
		if r.found {
			return true
		}
		if !r.state.visible(b) {
			continue
		}
		if len(r.tail) == cap(r.tail) {
			n := copy(r.tail, r.tail[len(r.tail)-len(r.want)+1:])
			r.tail = r.tail[:n]
		}
		r.tail = append(r.tail, b)
		r.found = bytes.HasSuffix(r.tail, r.want)
	}
	return r.found
}

// visible moves the scanner over output byte b and reports whether b is
// drawn as a visible character: not part of an escape sequence, not a
// control character, not whitespace.
func (st *escState) visible(b byte) bool {
	switch *st {
	case escStart:
		switch b {
		case '[':
			*st = escCSI
		case ']', 'P', '_', '^':
			*st = escString
		default:
			*st = escNone
		}
		return false
	case escCSI:
		if b >= 0x40 && b <= 0x7e {
			*st = escNone
		}
		return false
	case escString:
		switch b {
		case 0x07:
			*st = escNone
		case 0x1b:
			*st = escStringEsc
		}
		return false
	case escStringEsc:
		*st = escString
		if b == '\\' {
			*st = escNone
		}
		return false
	}
	if b == 0x1b {
		*st = escStart
		return false
	}
	return b > ' ' && b != 0x7f
}

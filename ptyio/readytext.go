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
		switch r.state {
		case escStart:
			switch b {
			case '[':
				r.state = escCSI
			case ']', 'P', '_', '^':
				r.state = escString
			default:
				r.state = escNone
			}
			continue
		case escCSI:
			if b >= 0x40 && b <= 0x7e {
				r.state = escNone
			}
			continue
		case escString:
			switch b {
			case 0x07:
				r.state = escNone
			case 0x1b:
				r.state = escStringEsc
			}
			continue
		case escStringEsc:
			r.state = escString
			if b == '\\' {
				r.state = escNone
			}
			continue
		}
		if b == 0x1b {
			r.state = escStart
			continue
		}
		if b <= ' ' || b == 0x7f {
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

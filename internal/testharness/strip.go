package testharness

import (
	"bytes"
	"strings"
)

// stripper keeps StripANSI of a growing byte stream without stripping it
// all again on every read: the part before a safe cut is stripped once and
// kept. A cut is safe where stripping the two sides apart gives what
// stripping them together gives: no escape sequence crosses it (an OSC or
// DCS string is not left open before it), and the side before it does not
// end, once its sequences are removed, in a carriage return (which joins
// a following newline) or an escape (which takes the next byte). Full-
// screen programs redraw the screen without newlines, so a cut may also
// fall before a CSI sequence that follows a complete one.
type stripper struct {
	clean strings.Builder // StripANSI of raw[:at]
	at    int
	// last caches String for a raw of length lastLen.
	last    string
	lastLen int
}

// minCut is how much unstripped output waits before a cut is looked for.
const minCut = 4 << 10

// String returns StripANSI(string(raw)); raw must extend the raw of the
// previous call.
func (s *stripper) String(raw []byte) string {
	if len(raw) == s.lastLen && s.last != "" {
		return s.last
	}
	if rest := raw[s.at:]; len(rest) >= minCut {
		if p := safeCut(rest); p > 0 {
			if e := removeEscapes(string(rest[:p])); !strings.HasSuffix(e, "\r") && !strings.HasSuffix(e, "\x1b") {
				s.clean.WriteString(finishStrip(e))
				s.at += p
			}
		}
	}
	s.last, s.lastLen = s.clean.String()+StripANSI(string(raw[s.at:])), len(raw)
	return s.last
}

// safeCut returns the last position p > 0 of b where no escape sequence
// crosses: after a newline, or before a CSI sequence (ESC [) that follows
// a printable byte not itself after an ESC; and where no OSC or DCS
// string is open before p. 0 when there is none.
func safeCut(b []byte) int {
	for p := len(b) - 1; p > 0; p-- {
		afterNewline := b[p-1] == '\n'
		beforeCSI := p+1 < len(b) && b[p] == 0x1b && b[p+1] == '[' && p >= 2 && b[p-1] >= 0x20 && b[p-1] <= 0x7e && b[p-2] != 0x1b
		if (afterNewline || beforeCSI) && !stringOpen(b[:p]) {
			return p
		}
	}
	return 0
}

// stringOpen reports whether b ends inside an OSC or DCS string: its last
// ESC starts one (OSC: ESC ], ended by BEL or ESC \; DCS and the like:
// ESC P, X, ^ or _, ended by ESC \) that has not ended in b.
func stringOpen(b []byte) bool {
	k := bytes.LastIndexByte(b, 0x1b)
	if k < 0 || k+1 >= len(b) {
		return k >= 0
	}
	switch b[k+1] {
	case ']':
		return bytes.IndexByte(b[k:], 0x07) < 0
	case 'P', 'X', '^', '_':
		return true
	}
	return false
}

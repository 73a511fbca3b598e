package ptyio

import (
	"bytes"
	"time"
)

// ScreenWatch names texts a program's dialogs draw on its terminal (for
// example a permission prompt's question) and what to call when one is
// drawn. Texts are matched as ChildSpec.ReadyText is: escape sequences,
// control characters and whitespace skipped.
//
// Only new output counts: once a text is seen it is not reported again
// until a key is typed at the Terminal (the person answered, or typed a
// prompt), and only output read after that key is matched then. A dialog
// a TUI keeps repainting is reported once; the same dialog drawn anew
// after a key is reported again.
type ScreenWatch struct {
	Texts []string
	// Seen is called with the index of the text drawn and when the output
	// that completed it was read, from the child's output goroutine,
	// after that output was written to the Terminal's Out. It must not
	// block.
	Seen func(i int, at time.Time)
}

// screenText finds a ScreenWatch's texts in a program's output. Only the
// output goroutine uses it.
type screenText struct {
	want  [][]byte  // the texts, whitespace removed ("" never matches)
	armed []bool    // the text may be reported
	tail  []byte    // the visible output's last bytes since the last arming
	keep  int       // the longest text's length
	ends  [256]bool // the texts' last bytes: only they can complete one
	state escState
	// key is the Terminal's last key (UnixNano) when it was last armed.
	key int64
	hit []int // the texts seen in the current chunk (reused)
}

// newScreenText returns a matcher of w's texts, or nil when w names none.
func newScreenText(w *ScreenWatch) *screenText {
	if w == nil || w.Seen == nil {
		return nil
	}
	m := &screenText{}
	for _, t := range w.Texts {
		b := bytes.Join(bytes.Fields([]byte(t)), nil)
		m.want = append(m.want, b)
		m.keep = max(m.keep, len(b))
		if len(b) > 0 {
			m.ends[b[len(b)-1]] = true
		}
	}
	if m.keep == 0 {
		return nil
	}
	m.armed = make([]bool, len(m.want))
	m.arm(0)
	m.tail = make([]byte, 0, m.keep+512) // compacted once every 512 bytes
	return m
}

// arm makes every text reportable again and forgets the output so far:
// key is the key typed that ends what was shown.
func (m *screenText) arm(key int64) {
	m.key = key
	m.tail = m.tail[:0]
	for i, w := range m.want {
		m.armed[i] = len(w) > 0
	}
}

// feed scans p, read after the key typed at lastKey (UnixNano, 0: none),
// and returns the indexes of the texts it completed (valid until the next
// feed).
func (m *screenText) feed(p []byte, lastKey int64) []int {
	if lastKey != m.key {
		m.arm(lastKey)
	}
	m.hit = m.hit[:0]
	for _, b := range p {
		if !m.state.visible(b) {
			continue
		}
		if len(m.tail) == cap(m.tail) {
			n := copy(m.tail, m.tail[len(m.tail)-m.keep+1:])
			m.tail = m.tail[:n]
		}
		m.tail = append(m.tail, b)
		if !m.ends[b] {
			continue
		}
		for i, w := range m.want {
			if m.armed[i] && w[len(w)-1] == b && bytes.HasSuffix(m.tail, w) {
				m.armed[i] = false
				m.hit = append(m.hit, i)
			}
		}
	}
	return m.hit
}

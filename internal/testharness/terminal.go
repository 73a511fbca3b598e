package testharness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Terminal drives a program under a pseudo-terminal, the way a person at a
// terminal would: it types, reads the screen output, resizes the window
// and waits for the program to end.
//
// Terminal answers the two queries full-screen programs send at start-up
// and block on when unanswered: cursor position (ESC[6n → ESC[1;1R) and
// primary device attributes (ESC[c → ESC[?1;2c). No other emulation is
// done: Output is the byte stream with escape sequences removed.
type Terminal struct {
	t    testing.TB
	cmd  *exec.Cmd
	ptmx *os.File
	pgid int

	mu       sync.Mutex
	raw      []byte
	clean    stripper // Output's text of raw
	scanned  int
	changed  chan struct{} // closed and replaced on every read
	readDone chan struct{}

	waitDone chan struct{}
	waitErr  error
	closeOne sync.Once
}

// StartTerminal starts cmd under a new PTY of cols×rows, as the leader of
// its own session and process group with the PTY as controlling
// terminal. The whole process group is killed and the PTY closed in
// t.Cleanup. cmd.Stdin/Stdout/Stderr must be nil.
func StartTerminal(t testing.TB, cmd *exec.Cmd, cols, rows int) *Terminal {
	t.Helper()
	// pty.StartWithSize sets Setsid and Setctty itself when SysProcAttr is
	// nil; keep any caller settings but make sure of both.
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Setpgid = false
	ptmx, err := pty.StartWithAttrs(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}, cmd.SysProcAttr)
	if err != nil {
		t.Fatalf("start %s under a PTY: %v", cmd.Path, err)
	}
	term := &Terminal{
		t: t, cmd: cmd, ptmx: ptmx, pgid: cmd.Process.Pid,
		changed: make(chan struct{}), readDone: make(chan struct{}), waitDone: make(chan struct{}),
	}
	go term.waitLoop()
	go term.readLoop()
	t.Cleanup(term.close)
	return term
}

// waitLoop owns cmd.Wait; it ends when the process exits.
func (term *Terminal) waitLoop() {
	defer close(term.waitDone)
	term.waitErr = term.cmd.Wait()
}

// readLoop owns reads from the PTY; it ends when the PTY is closed or all
// holders of its other end are gone.
func (term *Terminal) readLoop() {
	defer close(term.readDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := term.ptmx.Read(buf)
		if n > 0 {
			term.mu.Lock()
			term.raw = append(term.raw, buf[:n]...)
			// Answer before waiters see the query's output, so that input a
			// test types after seeing it follows the answer.
			if answers := term.queriesLocked(); len(answers) > 0 {
				_, _ = term.ptmx.Write(answers)
			}
			close(term.changed)
			term.changed = make(chan struct{})
			term.mu.Unlock()
		}
		if err != nil {
			term.mu.Lock()
			close(term.changed)
			term.changed = make(chan struct{})
			term.mu.Unlock()
			return
		}
	}
}

var terminalQueries = []struct{ query, answer string }{
	{"\x1b[6n", "\x1b[1;1R"},
	{"\x1b[?6n", "\x1b[?1;1R"},
	{"\x1b[c", "\x1b[?1;2c"},
	{"\x1b[0c", "\x1b[?1;2c"},
}

// queriesLocked finds terminal queries in the unscanned output and
// returns their answers.
func (term *Terminal) queriesLocked() []byte {
	var answers []byte
	data := term.raw[term.scanned:]
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != 0x1b {
			continue
		}
		for _, q := range terminalQueries {
			if bytes.HasPrefix(data[i:], []byte(q.query)) {
				answers = append(answers, q.answer...)
				last = i + len(q.query)
				break
			}
		}
	}
	// Keep a possibly incomplete query at the end for the next read.
	next := len(data) - 4
	if next < last {
		next = last
	}
	if next > 0 {
		term.scanned += next
	}
	return answers
}

// Type writes s to the terminal as typed input. Use "\r" for Enter.
func (term *Terminal) Type(s string) {
	term.t.Helper()
	if _, err := term.ptmx.Write([]byte(s)); err != nil {
		term.t.Errorf("type %q: %v", s, err)
	}
}

// TypeSlowly types s one character at a time with delay between them, for
// programs that treat a burst of input as a paste.
func (term *Terminal) TypeSlowly(s string, delay time.Duration) {
	term.t.Helper()
	for _, r := range s {
		term.Type(string(r))
		time.Sleep(delay)
	}
}

// Resize sets the window size; the program gets SIGWINCH.
func (term *Terminal) Resize(cols, rows int) {
	term.t.Helper()
	if err := pty.Setsize(term.ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		term.t.Errorf("resize to %dx%d: %v", cols, rows, err)
	}
}

// Output returns everything the program wrote so far, escape sequences
// removed (see StripANSI).
func (term *Terminal) Output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.clean.String(term.raw)
}

// RawOutput returns everything the program wrote so far, unchanged.
func (term *Terminal) RawOutput() []byte {
	term.mu.Lock()
	defer term.mu.Unlock()
	return bytes.Clone(term.raw)
}

// WaitFor waits until the output matches pattern, a *regexp.Regexp or a
// string. A string matches when it is a substring of Output, or of Output
// with all whitespace removed (full-screen programs often move the cursor
// instead of printing spaces). It returns an error naming the pattern and
// the tail of the output on timeout or when the program's output ended.
func (term *Terminal) WaitFor(pattern any, timeout time.Duration) error {
	var match func(string) bool
	switch p := pattern.(type) {
	case *regexp.Regexp:
		match = p.MatchString
	case string:
		squeezed := squeeze(p)
		match = func(out string) bool {
			return strings.Contains(out, p) || strings.Contains(squeeze(out), squeezed)
		}
	default:
		return fmt.Errorf("WaitFor: pattern must be a string or *regexp.Regexp, not %T", pattern)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		term.mu.Lock()
		out := term.clean.String(term.raw)
		changed := term.changed
		term.mu.Unlock()
		if match(out) {
			return nil
		}
		select {
		case <-changed:
		case <-term.readDone:
			if match(term.Output()) {
				return nil
			}
			return fmt.Errorf("output ended without %v; last output:\n%s", pattern, tail(term.Output(), 2000))
		case <-deadline.C:
			return fmt.Errorf("no %v in the output within %v; last output:\n%s", pattern, timeout, tail(term.Output(), 2000))
		}
	}
}

// Wait waits for the program to exit and returns its exit code (-1 when
// it died of a signal) and the signal that killed it (0 when it exited).
// What the program wrote last is in Output then: the PTY is read to its
// end (for at most outputDrain when a process left behind still holds
// it).
func (term *Terminal) Wait() (int, syscall.Signal) {
	<-term.waitDone
	drain := time.NewTimer(outputDrain)
	defer drain.Stop()
	select {
	case <-term.readDone:
	case <-drain.C:
	}
	return exitStatus(term.cmd.ProcessState, term.waitErr)
}

// outputDrain bounds Wait's read of what an exited program left in the
// PTY: its exit is seen before the reader has taken its last bytes (a
// full run once missed a program's last line, written just before it
// exited).
const outputDrain = 2 * time.Second

// WaitTimeout is Wait bounded by timeout; on timeout it returns an error
// and leaves the program running.
func (term *Terminal) WaitTimeout(timeout time.Duration) (int, syscall.Signal, error) {
	select {
	case <-term.waitDone:
		code, sig := term.Wait()
		return code, sig, nil
	case <-time.After(timeout):
		return 0, 0, fmt.Errorf("%s still running after %v; last output:\n%s", term.cmd.Path, timeout, tail(term.Output(), 2000))
	}
}

// Exited reports whether the program has exited.
func (term *Terminal) Exited() bool {
	select {
	case <-term.waitDone:
		return true
	default:
		return false
	}
}

// Pid is the program's process id, also its process group and session id.
func (term *Terminal) Pid() int { return term.pgid }

// Signal sends sig to the program's whole process group.
func (term *Terminal) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(-term.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// close kills the process group, closes the PTY and waits for both
// goroutines. Idempotent.
func (term *Terminal) close() {
	term.closeOne.Do(func() {
		_ = syscall.Kill(-term.pgid, syscall.SIGKILL)
		<-term.waitDone
		_ = term.ptmx.Close()
		<-term.readDone
	})
}

var (
	ansiCSI      = regexp.MustCompile(`\x1b\[([0-?]*)[ -/]*([@-~])`)
	ansiOSC      = regexp.MustCompile(`\x1b\][^\x07\x1b]*(\x07|\x1b\\)`)
	ansiDCS      = regexp.MustCompile(`\x1b[PX^_][^\x1b]*\x1b\\`)
	ansiCharset  = regexp.MustCompile(`\x1b[()*+][0-9A-Za-z]`)
	ansiTwoByte  = regexp.MustCompile(`\x1b[ -~]`)
	controlChars = regexp.MustCompile(`[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]`)
)

// StripANSI removes terminal escape sequences from s. Cursor-forward
// (CSI n C) becomes n spaces, a column move (CSI n G) one space and
// absolute cursor moves (CSI H/f) a newline, so words drawn by cursor addressing stay apart.
func StripANSI(s string) string { return finishStrip(removeEscapes(s)) }

// removeEscapes is StripANSI's first step: the escape sequences go.
func removeEscapes(s string) string {
	s = ansiOSC.ReplaceAllString(s, "")
	s = ansiDCS.ReplaceAllString(s, "")
	s = ansiCSI.ReplaceAllStringFunc(s, func(seq string) string {
		m := ansiCSI.FindStringSubmatch(seq)
		switch m[2] {
		case "C":
			n, err := strconv.Atoi(m[1])
			if err != nil || n < 1 {
				n = 1
			}
			if n > 200 {
				n = 200
			}
			return strings.Repeat(" ", n)
		case "G":
			return " "
		case "H", "f":
			return "\n"
		}
		return ""
	})
	s = ansiCharset.ReplaceAllString(s, "")
	return ansiTwoByte.ReplaceAllString(s, "")
}

// finishStrip is StripANSI's second step: line ends and control
// characters.
func finishStrip(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return controlChars.ReplaceAllString(s, "")
}

// squeeze removes the whitespace of s (what `\s` matches: tab, newline,
// form feed, carriage return and space).
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\f', '\r', ' ':
			return -1
		}
		return r
	}, s)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

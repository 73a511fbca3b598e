package ptyio

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testutil"
)

// tempFile creates a file in the test's temp folder, open for reading
// and writing.
func tempFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(t.TempDir(), name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func readAll(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testTTY opens a PTY pair standing for the person's terminal: the slave
// is what lifeloop would get as its stdin or stdout, what is drawn on it
// is copied into the returned screen, and what is written to keyboard is
// typed on it.
func testTTY(t *testing.T) (slave, keyboard *os.File, screen *testutil.SyncBuffer) {
	t.Helper()
	pm, ps, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	if err := setSize(pm, 80, 24); err != nil {
		t.Fatal(err)
	}
	screen = &testutil.SyncBuffer{}
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(screen, pm) }()
	t.Cleanup(func() { _ = ps.Close(); _ = pm.Close(); <-copied })
	return ps, pm, screen
}

// TestPassThroughWithoutTerminal: with no terminal among stdin, stdout
// and stderr, the child gets the three descriptors as they are and no
// PTY: input is read by the child itself to its end, output reaches the
// files byte for byte (no CR added), and the child has no controlling
// terminal.
func TestPassThroughWithoutTerminal(t *testing.T) {
	in, w := stdinPipe(t)
	if _, err := w.WriteString("line1\nline2"); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	out, errf := tempFile(t, "out"), tempFile(t, "err")
	tm := openTerm(t, TerminalConfig{In: in, Out: out, Err: errf, PassThrough: true})
	if got := tm.passesThrough(); got != [3]bool{true, true, true} {
		t.Fatalf("passesThrough = %v, want all three", got)
	}
	c := start(t, tm, sh(t, `test -t 0 || echo in:notty; test -t 1 || echo out:notty; cat; echo; echo oops >&2; (: </dev/tty) 2>/dev/null || echo no-ctty`))
	if st := wait(t, c); st.ExitCode() != 0 {
		t.Fatalf("exit %v", st)
	}
	if got, want := readAll(t, out), "in:notty\nout:notty\nline1\nline2\nno-ctty\n"; got != want {
		t.Errorf("stdout file = %q, want %q", got, want)
	}
	if got := readAll(t, errf); got != "oops\n" {
		t.Errorf("stderr file = %q, want %q", got, "oops\n")
	}
	if a := c.Activity(); a.Metered || a.BytesOut != 0 {
		t.Errorf("Activity = %+v, want unmetered", a)
	}
	if !c.TakesKeys() {
		t.Error("TakesKeys = false for a child that reads its own stdin")
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Error("Write to a child without a terminal succeeded")
	}
}

// TestPassThroughOutputFromTerminal: stdin a terminal, stdout a file. The
// child reads the person's keys through its PTY and writes its output to
// the file untouched; what it draws on its terminal shows on the
// person's terminal (lifeloop's stderr here).
func TestPassThroughOutputFromTerminal(t *testing.T) {
	tty, keyboard, screen := testTTY(t)
	out := tempFile(t, "out")
	tm := openTerm(t, TerminalConfig{In: tty, Out: out, Err: tty, PassThrough: true})
	if got := tm.passesThrough(); got != [3]bool{false, true, false} {
		t.Fatalf("passesThrough = %v, want stdout only", got)
	}
	c := start(t, tm, sh(t, `test -t 0 && echo in:tty >&2; test -t 1 || echo out:notty; read x; echo got:$x`))
	screen.WaitContains(t, "in:tty", safety)
	if _, err := keyboard.WriteString("typed\r"); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c); st.ExitCode() != 0 {
		t.Fatalf("exit %v", st)
	}
	if got, want := readAll(t, out), "out:notty\ngot:typed\n"; got != want {
		t.Errorf("stdout file = %q, want %q", got, want)
	}
	if c.Activity().Metered {
		t.Error("Activity is metered though the child's stdout is a file")
	}
}

// TestPassThroughInputFromPipe: stdin a pipe, stdout a terminal. The
// child reads the pipe itself (it is not a terminal to it) and draws on
// its PTY, relayed to the person's terminal and metered.
func TestPassThroughInputFromPipe(t *testing.T) {
	tty, _, screen := testTTY(t)
	in, w := stdinPipe(t)
	if _, err := w.WriteString("piped\n"); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	tm := openTerm(t, TerminalConfig{In: in, Out: tty, Err: tty, PassThrough: true})
	c := start(t, tm, sh(t, `test -t 0 || echo in:notty; test -t 1 && echo out:tty; read x; echo got:$x`))
	if st := wait(t, c); st.ExitCode() != 0 {
		t.Fatalf("exit %v", st)
	}
	screen.WaitContains(t, "in:notty", safety)
	screen.WaitContains(t, "out:tty", safety)
	screen.WaitContains(t, "got:piped", safety)
	if a := c.Activity(); !a.Metered || a.BytesOut == 0 {
		t.Errorf("Activity = %+v, want metered output", a)
	}
}

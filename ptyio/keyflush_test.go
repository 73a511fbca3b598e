package ptyio

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/internal/testutil"
)

// fakeTUIEnv makes the test binary run fakeTUI instead of its tests.
const fakeTUIEnv = "PTYIO_FAKE_TUI=1"

// fakeTUI starts as TUIs were seen to: it leaves canonical mode early
// (the terminal still echoes), draws its prompt, finishes starting up,
// and only then enters raw mode with TCSAFLUSH, which discards the input
// not read yet. It then reads a line and prints it as "got:…".
func fakeTUI() int {
	tio, err := unix.IoctlGetTermios(0, ioctlGetTermios)
	if err != nil {
		fmt.Println("fake TUI: no terminal:", err)
		return 3
	}
	early := *tio
	early.Lflag &^= unix.ICANON
	if err := unix.IoctlSetTermios(0, ioctlSetTermios, &early); err != nil {
		return 3
	}
	fmt.Print("Type your message")
	time.Sleep(300 * time.Millisecond) // still starting: keys sent now are discarded below
	raw := early
	raw.Lflag &^= unix.ECHO | unix.ISIG | unix.IEXTEN
	raw.Iflag &^= unix.ICRNL | unix.IXON
	if err := unix.IoctlSetTermios(0, ioctlSetTermiosFlush, &raw); err != nil {
		return 3
	}
	fmt.Print("\r\nREADING\r\n")
	var got []byte
	buf := make([]byte, 64)
	for !bytes.ContainsAny(got, "\r\n") {
		n, err := os.Stdin.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	fmt.Printf("got:%s\r\n", bytes.TrimRight(got, "\r\n"))
	return 0
}

// TestHeldKeysWaitForRawMode: keys held while a TUI starts are released
// once it takes keys (TakesKeys), as the launcher does, and reach it
// whole although it discards pending input when it enters raw mode
// after drawing its prompt.
func TestHeldKeysWaitForRawMode(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	kr, kw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kw.Close(); kr.Close() })
	out := &testutil.SyncBuffer{}
	term := openTerm(t, TerminalConfig{In: kr, Out: out})
	term.HoldInput()
	if _, err := kw.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	c := start(t, term, ChildSpec{Path: exe, Env: append(testEnv(t), fakeTUIEnv), Dir: t.TempDir(), ReadyText: "Type your message"})
	deadline := time.Now().Add(safety)
	for !c.TakesKeys() {
		select {
		case <-c.Done():
			t.Fatalf("the fake TUI ended before it took keys: %q", out.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake TUI never took keys: %q", out.String())
		}
	}
	term.ReleaseInput()
	for !strings.Contains(out.String(), "READING") {
		if time.Now().After(deadline) {
			t.Fatalf("the fake TUI never read: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := kw.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	wait(t, c)
	if !strings.Contains(out.String(), "got:hello\r") {
		t.Errorf("the fake TUI got %q, want got:hello (the keys held while it started)", out.String())
	}
}

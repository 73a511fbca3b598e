package top

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptyPair opens a pseudo-terminal; everything written to the terminal
// side is collected from the controller side.
func ptyPair(t *testing.T) (tty *os.File, output func() string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: 80, Rows: 24}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() { // ends when ptmx is closed
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = tty.Close()
		_ = ptmx.Close()
		<-done
	})
	return tty, func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
}

func termios(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	st, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	return *st
}

func waitOutput(t *testing.T, output func() string, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(output(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%q", s, tail(output(), 1500))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// TestNoColour runs the screen on a pseudo-terminal twice: with a colour
// terminal the high-pressure gauge is drawn in colour; with NO_COLOR the
// same screen has no colour at all.
func TestNoColour(t *testing.T) {
	for _, c := range []struct {
		env    []string
		colour bool
	}{
		{[]string{"TERM=xterm-256color"}, true},
		{[]string{"TERM=xterm-256color", "NO_COLOR=1"}, false},
	} {
		tty, output := ptyPair(t)
		p := tea.NewProgram(fixtureModel(80, 24), tea.WithInput(tty), tea.WithOutput(tty), tea.WithEnvironment(c.env))
		done := make(chan error, 1)
		go func() { _, err := p.Run(); done <- err }()
		waitOutput(t, output, "ses_9TAQGFKK")
		p.Quit()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		out := output()
		if got := strings.Contains(out, "38;5;208") || strings.Contains(out, "38;2;"); got != c.colour {
			t.Errorf("%v: colour %v, want %v", c.env, got, c.colour)
		}
		if !c.colour && strings.Contains(out, "\x1b[3") {
			t.Errorf("%v: a foreground colour was drawn", c.env)
		}
	}
}

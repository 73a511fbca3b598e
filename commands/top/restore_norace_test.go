//go:build !race

package top

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/commands/topview"
)

// The restore tests do not run under the race detector: when it ends,
// Bubble Tea v2.1.1 closes its terminal reader (muesli/cancelreader)
// while the reader's goroutine may still read the file descriptor —
// after a panic (Program.shutdown with kill) and, now and then, after a
// cancelled context — which the detector reports in the library. The
// terminal is restored all the same, which is what these tests check;
// the end-to-end test (TestTopDashboard) checks it too, with stty, on the
// built binary.

// panicky is the top model with a View that panics once asked to.
type panicky struct {
	*Model
	armed bool
}

func (p *panicky) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		p.armed = true
		return p, nil
	}
	_, cmd := p.Model.Update(msg)
	return p, cmd
}

func (p *panicky) View() tea.View {
	if p.armed {
		panic("a bug in a view")
	}
	return p.Model.View()
}

// TestTerminalRestoredOnPanic runs the top model on a real pseudo-terminal
// and makes its view panic: the program ends with an error and the
// terminal's modes are what they were before (raw mode left), the
// alternate screen left.
func TestTerminalRestoredOnPanic(t *testing.T) {
	tty, output := ptyPair(t)
	before := termios(t, tty)
	m := &panicky{Model: fixtureModel(80, 24)}
	p := tea.NewProgram(m, tea.WithInput(tty), tea.WithOutput(tty), tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	waitOutput(t, output, "ses_9TAQGFKK")
	if raw := termios(t, tty); raw.Lflag&unix.ICANON != 0 {
		t.Fatal("the program did not put the terminal in raw mode")
	}
	p.Send(tea.KeyPressMsg{Code: 'x', Text: "x"})
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a panic ended the program without an error")
		}
	case <-time.After(10 * time.Second):
		p.Kill()
		t.Fatal("the program did not end after the panic")
	}
	if after := termios(t, tty); after != before {
		t.Errorf("terminal modes not restored after a panic:\nbefore %+v\nafter  %+v", before, after)
	}
	waitOutput(t, output, "\x1b[?1049l")
}

// TestInteractiveRestoresOnCancel runs Interactive (program and state
// directory watcher) on a pseudo-terminal and ends it through its
// context, as SIGTERM does in the command: it returns nil, the watcher is
// gone and the terminal is as before.
func TestInteractiveRestoresOnCancel(t *testing.T) {
	tty, output := ptyPair(t)
	before := termios(t, tty)
	src, err := topview.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Interactive(ctx, src, Config{}, tty, tty, []string{"TERM=xterm-256color"})
	}()
	waitOutput(t, output, "no sessions")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Interactive: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Interactive did not return after its context ended")
	}
	if after := termios(t, tty); after != before {
		t.Errorf("terminal modes not restored:\nbefore %+v\nafter  %+v", before, after)
	}
	waitOutput(t, output, "\x1b[?1049l")
}

//go:build !race

package top

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/sys/unix"
)

// The panic test does not run under the race detector: after a panic,
// Bubble Tea v2.1.1 ends its input reader without waiting for it
// (Program.shutdown with kill) and closes the terminal reader while that
// goroutine may still read the file descriptor, which the detector
// reports. The terminal is restored all the same, which is what this test
// checks.

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

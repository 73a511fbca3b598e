package launcher

import (
	"bytes"
	"os"
	"testing"

	"github.com/creack/pty"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// TestTerminalOf: the device of a terminal on standard input (else
// output), tmux's pane and socket, screen's session; nil with none.
func TestTerminalOf(t *testing.T) {
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptm.Close()
	defer tty.Close()
	wantTTY := tty.Name()

	got := terminalOf(tty, nil, []string{"TMUX=/tmp/tmux-1000/default,4242,0", "TMUX_PANE=%7", "HOME=/h"})
	want := statedir.Terminal{TTY: wantTTY, TmuxPane: "%7", TmuxSocket: "/tmp/tmux-1000/default"}
	if got == nil || *got != want {
		t.Errorf("in tmux: %+v, want %+v", got, want)
	}
	// Input piped, output on the terminal; screen.
	got = terminalOf(bytes.NewReader(nil), tty, []string{"STY=2211.pts-5.dev"})
	if want := (statedir.Terminal{TTY: wantTTY, Screen: "2211.pts-5.dev"}); got == nil || *got != want {
		t.Errorf("in screen: %+v, want %+v", got, want)
	}
	// A plain file is no terminal; $TMUX without a pane names none.
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := terminalOf(f, &bytes.Buffer{}, []string{"TMUX=/tmp/tmux-1000/default,1,0"}); got != nil {
		t.Errorf("without a terminal: %+v, want nil", got)
	}
}

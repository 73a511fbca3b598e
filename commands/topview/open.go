package topview

import (
	"fmt"
	"strings"
)

// OpenCommand says how to reach the terminal session r runs on, from a
// terminal whose environment getenv reads: "tmux switch-client -t %3"
// from inside the same tmux server, "tmux -S SOCKET attach -t %3"
// elsewhere, "screen -x STY" for a GNU screen session, else the device
// and the harness's pid. ok is false when the record names no terminal.
func OpenCommand(r Row, getenv func(string) string) (line string, ok bool) {
	t := r.Terminal
	switch {
	case t == nil:
		return fmt.Sprintf("%s: its terminal is not known (started without one, or by an older lifeloop)", ShortID(r.ID)), false
	case t.TmuxPane != "":
		here, _, _ := strings.Cut(getenv("TMUX"), ",")
		if here != "" && (t.TmuxSocket == "" || here == t.TmuxSocket) {
			return "tmux switch-client -t " + t.TmuxPane, true
		}
		if t.TmuxSocket != "" {
			return "tmux -S " + shellWord(t.TmuxSocket) + " attach -t " + t.TmuxPane, true
		}
		return "tmux attach -t " + t.TmuxPane, true
	case t.Screen != "":
		return "screen -x " + shellWord(t.Screen), true
	case t.TTY != "":
		s := fmt.Sprintf("%s runs on %s", ShortID(r.ID), t.TTY)
		if r.Pid > 0 {
			s += fmt.Sprintf(" (pid %d)", r.Pid)
		}
		return s, true
	}
	return fmt.Sprintf("%s: its terminal is not known", ShortID(r.ID)), false
}

// shellWord quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./%:,@+=.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./%:,@+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

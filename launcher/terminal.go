package launcher

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// terminalOf is the terminal a session is started on: the device of the
// first of in and out that is a terminal, and the tmux pane or screen
// session env names. nil when there is none of these.
func terminalOf(in io.Reader, out io.Writer, env []string) *statedir.Terminal {
	t := statedir.Terminal{Screen: envValue(env, "STY"), TmuxPane: envValue(env, "TMUX_PANE")}
	if tmux := envValue(env, "TMUX"); tmux != "" && t.TmuxPane != "" {
		t.TmuxSocket, _, _ = strings.Cut(tmux, ",")
	}
	for _, f := range []any{in, out} {
		if file, ok := f.(*os.File); ok && file != nil && term.IsTerminal(int(file.Fd())) {
			t.TTY = ttyName(file)
			break
		}
	}
	if t == (statedir.Terminal{}) {
		return nil
	}
	return &t
}

// envValue is the last value of name in env ("" when unset).
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// ttyName is the device path of terminal f: its /proc/self/fd link where
// there is one, else the terminal device under /dev with f's device
// number; "" when neither tells.
func ttyName(f *os.File) string {
	fd := strconv.Itoa(int(f.Fd()))
	if p, err := os.Readlink("/proc/self/fd/" + fd); err == nil && strings.HasPrefix(p, "/dev/") {
		return p
	}
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	for _, pattern := range []string{"/dev/pts/*", "/dev/ttys*", "/dev/tty*"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			var ds syscall.Stat_t
			if syscall.Stat(p, &ds) == nil && uint64(ds.Rdev) == uint64(st.Rdev) && ds.Mode&syscall.S_IFMT == syscall.S_IFCHR {
				return p
			}
		}
	}
	return ""
}

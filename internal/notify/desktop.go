package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unicode/utf8"
)

// maxLine bounds the desktop notification's title and body.
const maxLine = 200

// desktopProgram is the desktop lane's program, looked up on its first
// notification (only that lane's worker touches it).
type desktopProgram struct {
	looked bool
	path   string // "" when not found
}

// errNoDesktop is the failure of a desktop notifier with no program; it
// is logged once like any failure, and no lookup is tried again.
var errNoDesktop = errors.New("no desktop notification program on PATH")

// desktopArgs is the program and arguments that show title and body on
// this platform: osascript on macOS (the texts as arguments, never inside
// the script), notify-send elsewhere.
func desktopArgs(goos, title, body string) (string, []string) {
	if goos == "darwin" {
		return "osascript", []string{
			"-e", "on run argv",
			"-e", "display notification (item 2 of argv) with title (item 1 of argv)",
			"-e", "end run",
			title, body,
		}
	}
	return "notify-send", []string{"--app-name=lifeloop", "--", title, body}
}

// desktopText is the one-line title and body for e: the harness and the
// kind; the detail and the working folder's name.
func desktopText(e Episode) (title, body string) {
	who := e.Harness
	if who == "" {
		who = "session " + e.Session
	}
	title = oneLine(who + ": " + strings.ReplaceAll(e.Kind, "_", " "))
	where := filepath.Base(e.Cwd)
	switch {
	case e.Detail != "" && e.Cwd != "":
		body = e.Detail + " (" + where + ")"
	case e.Detail != "":
		body = e.Detail
	default:
		body = "in " + where
	}
	return title, oneLine(body)
}

// oneLine is s on one line of at most maxLine characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxLine {
		r := []rune(s)
		s = string(r[:maxLine-1]) + "…"
	}
	return s
}

// showDesktop shows e, bounded by DefaultDesktopTimeout, without a
// terminal and with its output discarded.
func (n *Notifier) showDesktop(ctx context.Context, e Episode) error {
	title, body := desktopText(e)
	name, args := desktopArgs(runtime.GOOS, title, body)
	p := &n.desktopProgram
	if !p.looked {
		p.looked = true
		p.path = lookPath(name, n.baseEnv())
	}
	if p.path == "" {
		return fmt.Errorf("%w (%s): install it, or leave --notify-desktop out", errNoDesktop, name)
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultDesktopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.path, args...)
	cmd.Env = n.baseEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %v", name, err)
	}
	return nil
}

// lookPath finds name in env's PATH; "" when it is not there.
func lookPath(name string, env []string) string {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		f := filepath.Join(dir, name)
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return f
		}
	}
	return ""
}

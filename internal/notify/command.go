package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The environment variables a notifier command gets (docs/notify.md).
const (
	EnvSession   = "LIFELOOP_SESSION_ID"
	EnvHarness   = "LIFELOOP_HARNESS"
	EnvCwd       = "LIFELOOP_CWD"
	EnvKind      = "LIFELOOP_ATTENTION"
	EnvSince     = "LIFELOOP_ATTENTION_SINCE"
	EnvDetail    = "LIFELOOP_ATTENTION_DETAIL"
	EnvSource    = "LIFELOOP_ATTENTION_SOURCE"
	EnvEvidence  = "LIFELOOP_ATTENTION_EVIDENCE"
	EnvEpisode   = "LIFELOOP_ATTENTION_EPISODE"
	EnvTurn      = "LIFELOOP_ATTENTION_TURN"
	EnvSecret    = "LIFELOOP_NOTIFY_SECRET" // removed from the command's environment
	timeLayout   = "2006-01-02T15:04:05.000Z07:00"
	maxEnvDetail = 2000
)

// commandEnv is base with e's facts set (replacing any of the same name)
// and the webhook secret removed.
func commandEnv(base []string, e Episode) []string {
	facts := [][2]string{
		{EnvSession, e.Session},
		{EnvHarness, e.Harness},
		{EnvCwd, e.Cwd},
		{EnvKind, e.Kind},
		{EnvSince, formatTime(e.Since)},
		{EnvDetail, envValue(e.Detail)},
		{EnvSource, e.Source},
		{EnvEvidence, envValue(e.Evidence)},
		{EnvEpisode, strconv.Itoa(e.ID)},
		{EnvTurn, strconv.Itoa(e.Turn)},
	}
	drop := map[string]bool{EnvSecret: true}
	for _, f := range facts {
		drop[f[0]] = true
	}
	env := make([]string, 0, len(base)+len(facts))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	for _, f := range facts {
		env = append(env, f[0]+"="+f[1])
	}
	return env
}

// envValue is s as an environment value can hold it: no NUL, bounded.
func envValue(s string) string {
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) > maxEnvDetail {
		s = strings.ToValidUTF8(s[:maxEnvDetail], "")
	}
	return s
}

// formatTime is t in RFC 3339 with milliseconds, UTC; "" when zero.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// baseEnv is the environment notifier programs start from.
func (n *Notifier) baseEnv() []string {
	if n.cfg.Env != nil {
		return n.cfg.Env
	}
	return os.Environ()
}

// runCommand runs the person's command for e: sh -c, in a session and
// process group of its own with no terminal (stdin /dev/null, output to
// LogPath or discarded), killed with its group after CommandTimeout or
// when ctx ends.
func (n *Notifier) runCommand(ctx context.Context, e Episode) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", n.cfg.Command)
	cmd.Env = commandEnv(n.baseEnv(), e)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var logErr error
	if n.cfg.LogPath != "" {
		f, err := os.OpenFile(n.cfg.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			logErr = err
		} else {
			defer f.Close()
			fmt.Fprintf(f, "--- %s episode %d %s\n", formatTime(n.cfg.Now()), e.ID, e.Kind)
			cmd.Stdout, cmd.Stderr = f, f
		}
	}
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the command ran longer than %s; its process group was killed", n.cfg.CommandTimeout)
	case err != nil:
		return fmt.Errorf("the command failed: %v%s", err, n.seeLog())
	case logErr != nil:
		return fmt.Errorf("the command's output is discarded: %v", logErr)
	}
	return nil
}

// seeLog points at the command's output, where there is one.
func (n *Notifier) seeLog() string {
	if n.cfg.LogPath == "" {
		return ""
	}
	return "; its output is in " + n.cfg.LogPath
}

package handoff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultCommandTimeout bounds a note command's run.
const DefaultCommandTimeout = 30 * time.Second

// Command is a person's own command that writes the note instead of
// lifeloop: run by `sh -c`, in the session's working folder, with the
// session's facts in its environment (CommandEnv); its standard output
// is the note, used as is.
type Command struct {
	// Script is the shell command line.
	Script string
	// Env is the environment it starts from (lifeloop's).
	Env []string
	// Timeout bounds the run (0: DefaultCommandTimeout); the command's
	// process group is killed at the end of it.
	Timeout time.Duration
	// MaxBytes bounds the note (0: DefaultMaxBytes): a longer output is a
	// failure, not cut.
	MaxBytes int
}

// CommandEnv returns the variables a note command gets: the session's id,
// harness, working folder, session file, renewals and the note's bound.
func CommandEnv(f Facts, maxBytes int) []string {
	return []string{
		"LIFELOOP_SESSION_ID=" + f.SessionID,
		"LIFELOOP_HARNESS=" + f.Harness,
		"LIFELOOP_CWD=" + f.Cwd,
		"LIFELOOP_SESSION_FILE=" + f.SessionFile,
		"LIFELOOP_RENEWALS=" + strconv.Itoa(f.Renewals),
		"LIFELOOP_HANDOFF_MAX_BYTES=" + strconv.Itoa(maxBytes),
	}
}

// Run runs the command for the session of facts f and returns its note.
// The error says in one line why the output cannot be the note: the
// command failed to start, exited non-zero, ran past its timeout, printed
// nothing or more than MaxBytes.
func (c Command) Run(ctx context.Context, f Facts) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	maxBytes := c.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", c.Script)
	cmd.Dir = f.Cwd
	cmd.Env = append(append([]string(nil), c.Env...), CommandEnv(f, maxBytes)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out := &capped{max: maxBytes}
	var stderr capped
	stderr.max = 512
	cmd.Stdout, cmd.Stderr = out, &stderr
	err := cmd.Run()
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "", fmt.Errorf("the handoff command ran past its timeout of %s", timeout)
	case err != nil:
		why := strings.TrimSpace(stderr.buf.String())
		if i := strings.IndexByte(why, '\n'); i >= 0 {
			why = why[:i]
		}
		if why != "" {
			why = ": " + why
		}
		return "", fmt.Errorf("the handoff command failed (%v)%s", err, why)
	case out.over:
		return "", fmt.Errorf("the handoff command printed more than %d bytes", maxBytes)
	case strings.TrimSpace(out.buf.String()) == "":
		return "", errors.New("the handoff command printed nothing")
	}
	return out.buf.String(), nil
}

// capped keeps the first max bytes written to it and notes whether more
// came.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

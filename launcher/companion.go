package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// CompanionLog is the file in the session folder that a companion
// client's output is appended to.
const CompanionLog = "companion.log"

// companionGrace is how long the companion gets after session.ended to
// exit by itself (it exits when it reads the end), and then after SIGTERM
// before SIGKILL.
const companionGrace = time.Second

// companion is the client that runs beside the session (Options.Companion):
// in its own session and process group, without the terminal, its output
// in companion.log.
type companion struct {
	cmd  *exec.Cmd
	name string
	// exited is closed once it has exited; state is how.
	exited chan struct{}
	state  *os.ProcessState
	// reported: its exit was seen by the loop (recorded or not).
	reported bool
}

// companionName is how evidence names the companion: its first argument
// (the subcommand, `autorenew`), else its program's name.
func companionName(argv []string) string {
	if len(argv) > 1 && argv[1] != "" {
		return argv[1]
	}
	return filepath.Base(argv[0])
}

// startCompanion starts argv with env in dir's session, its output
// appended to dir/companion.log (0600). Its life is the session's: stop
// ends it, not ctx's end.
func startCompanion(ctx context.Context, argv, env []string, dir string) (*companion, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command line")
	}
	log, err := os.OpenFile(filepath.Join(dir, CompanionLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() { _ = log.Close() }() // the child holds its own copy
	cmd := exec.CommandContext(context.WithoutCancel(ctx), argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, ""
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = log, log
	// Its own session: no controlling terminal, its own process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &companion{cmd: cmd, name: companionName(argv), exited: make(chan struct{})}
	go func() { // ends when the companion exits; stop kills it at the session's end
		_ = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.exited)
	}()
	return c, nil
}

// stop ends the companion at the session's end: up to companionGrace to
// exit by itself, then SIGTERM to its group, then SIGKILL after
// companionGrace more. It returns once it and what it left in its group
// have exited (about 2 s at most).
func (c *companion) stop() {
	if c == nil {
		return
	}
	pgid := c.cmd.Process.Pid
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			_ = syscall.Kill(-pgid, sig)
		}
		t := time.NewTimer(companionGrace)
		select {
		case <-c.exited:
			t.Stop()
			c.killLeftovers(pgid)
			return
		case <-t.C:
		}
	}
}

// leftoverWait bounds how long stop waits for what the companion left in
// its group to die once killed.
const leftoverWait = 500 * time.Millisecond

// killLeftovers kills what the companion left in its group and waits,
// within leftoverWait, until none of it can act.
func (c *companion) killLeftovers(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for end := time.Now().Add(leftoverWait); groupAlive(pgid) && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
}

// startCompanion starts the session's companion, if it has one; one that
// cannot start is one capability.degraded, and the session goes on.
func (s *supervisor) startCompanion() {
	if len(s.cfg.Companion) == 0 {
		return
	}
	c, err := startCompanion(s.ctx, s.cfg.Companion, s.cfg.CompanionEnv, statedir.SessionDir(s.cfg.StateDir, s.rec.ID))
	if err != nil {
		s.log.Warn("companion did not start", "err", err)
		s.warnDegraded("companion", fmt.Sprintf("the companion client `%s` could not start: %v; the session goes on without it", companionName(s.cfg.Companion), err))
		return
	}
	s.log.Info("companion started", "pid", c.cmd.Process.Pid, "name", c.name)
	s.companion = c
}

// companionExited is closed when the companion exits, until the loop has
// seen it (nil: none runs).
func (s *supervisor) companionExited() <-chan struct{} {
	if s.companion == nil || s.companion.reported {
		return nil
	}
	return s.companion.exited
}

// onCompanionExit records once that the companion exited while the
// session runs; not once the session is ending (a stop begun, or the
// harness gone for good).
func (s *supervisor) onCompanionExit() {
	c := s.companion
	c.reported = true
	how := "exit status unknown"
	if c.state != nil {
		how = c.state.String()
	}
	s.log.Warn("companion exited", "name", c.name, "how", how)
	if s.stopping || (s.drain != nil && s.renewing == nil) {
		return
	}
	s.warnDegraded("companion", fmt.Sprintf("the companion client `%s` exited (%s) at %s; the session goes on without it",
		c.name, how, s.cfg.Now().UTC().Format(time.RFC3339)))
}

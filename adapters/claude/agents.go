package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// Claude's background sessions that lifeloop did not start (a person's
// own `claude --bg` without lifeloop's process wrapper) are listed,
// read-only, from `claude agents --json` (measured with 2.1.332): a JSON
// array, oldest first, of the sessions Claude's daemon and session
// registry know, background and interactive. With no daemon running it
// prints [] and starts none.

// agentsSource names where the rows come from.
const agentsSource = "claude agents"

var _ adapters.ExternalLister = Harness{}

// agent is one element of `claude agents --json`: every field Claude
// 2.1.332 writes there. pid is absent for a session whose job Claude
// still counts as working or blocked but whose process is not
// registered; id (the job's short id) for a session the daemon does not
// run as a job; state for one that is no job; waitingFor unless status
// is "waiting".
type agent struct {
	Pid        int    `json:"pid"`
	ID         string `json:"id"`
	Cwd        string `json:"cwd"`
	Kind       string `json:"kind"` // background, interactive
	StartedAt  int64  `json:"startedAt"`
	SessionID  string `json:"sessionId"`
	Name       string `json:"name"`
	Status     string `json:"status"` // busy, idle, waiting
	WaitingFor string `json:"waitingFor"`
	State      string `json:"state"` // working, blocked, done, failed, stopped
}

// ParseAgents reads the output of `claude agents --json` and returns its
// background sessions (interactive ones are a person's TUIs, not
// background sessions, and are left out).
func ParseAgents(out []byte) ([]adapters.ExternalSession, error) {
	var all []agent
	if err := json.Unmarshal(bytes.TrimSpace(out), &all); err != nil {
		return nil, fmt.Errorf("%s --json printed no JSON array of sessions: %w", agentsSource, err)
	}
	var ss []adapters.ExternalSession
	for _, a := range all {
		if a.Kind != "background" {
			continue
		}
		s := adapters.ExternalSession{
			ID: a.ID, SessionID: a.SessionID, Pid: a.Pid, Cwd: a.Cwd, Name: a.Name,
			State: a.State, Status: a.Status, WaitingFor: a.WaitingFor, Source: agentsSource,
		}
		if a.StartedAt > 0 {
			s.StartedAt = time.UnixMilli(a.StartedAt).UTC()
		}
		if s.ID == "" {
			s.ID = a.SessionID
		} else {
			s.Attach = "claude attach " + a.ID
		}
		if s.ID == "" {
			continue // nothing names it
		}
		ss = append(ss, s)
	}
	return ss, nil
}

// backgroundRegistered reports whether Claude's session registry in
// config folder dir names a background session.
func backgroundRegistered(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "sessions", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		var e struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(b, &e) == nil && e.Kind == "bg" {
			return true
		}
	}
	return false
}

// ExternalStamp implements adapters.ExternalLister: the name, size and
// modification time of each file of Claude's session registry
// (<config>/sessions/*.json, rewritten when a session's status changes)
// and of each background job's state (<config>/jobs/*/state.json), which
// `claude agents` reads.
func (Harness) ExternalStamp(env []string) string {
	dir, err := configDir(env)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, pattern := range []string{filepath.Join(dir, "sessions", "*.json"), filepath.Join(dir, "jobs", "*", "state.json")} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				fmt.Fprintf(&b, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return b.String()
}

// ListExternal implements adapters.ExternalLister: it runs `claude agents
// --json` (the claude on env's PATH, in env) and returns the background
// sessions it lists. It runs nothing when Claude's session registry
// (<config>/sessions/<pid>.json: one file per live session, kind "bg"
// for a background one) names no background session, or no claude is on
// PATH: every running background session is registered there (a job not
// yet given a process is listed once it is), a person with only
// interactive sessions pays nothing, and `claude agents` would otherwise
// write Claude's configuration into a home that has none.
func (Harness) ListExternal(ctx context.Context, env []string) ([]adapters.ExternalSession, error) {
	dir, err := configDir(env)
	if err != nil {
		return nil, nil
	}
	if !backgroundRegistered(dir) {
		return nil, nil
	}
	bin := adapters.LookPath("claude", adapters.EnvValue(env, "PATH"))
	if bin == "" {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, bin, "agents", "--json")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s --json did not answer in time (%w)", agentsSource, context.Cause(ctx))
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return nil, fmt.Errorf("%s --json: exit %d: %s", agentsSource, ee.ExitCode(), msg)
		}
		return nil, fmt.Errorf("%s --json: %w", agentsSource, err)
	}
	return ParseAgents(stdout.Bytes())
}

package watch

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ReasonHarnessExited ends a watch whose harness process (Options.Process)
// has ended.
const ReasonHarnessExited = "harness_exited"

// processPoll is how often a watch looks whether its harness process is
// still there: it is not the watch's child, so no wait reports its end.
const processPoll = 200 * time.Millisecond

// Process is the harness process a watch follows: a background session a
// harness started through lifeloop's process wrapper, which exec'd it, so
// Pid is the session's own process.
type Process struct {
	Pid int
	// SessionID is the harness session it runs ("" to discover).
	SessionID string
	// LaunchedBy are the harness sessions that started it, as the
	// harness said; the newest one lifeloop recorded is its parent.
	LaunchedBy []string
	// StateDir is where the parent's lifeloop session is looked up.
	StateDir string
	// Since is when the harness was asked for this process's session
	// (zero: not known). A session that continues a conversation (a
	// resumed one) writes on to its transcript: what it holds from before
	// Since gives the binding and the pressure, and is not recorded again
	// as this session's turns.
	Since time.Time
}

// describe adds what is known of the process to the session record: its
// pid and its parent.
func (p *Process) describe(rec *statedir.SessionRecord) {
	if p == nil {
		return
	}
	rec.Pid = p.Pid
	rec.Parent = p.parent()
	rec.Continues = p.continues(rec.ID)
}

// continues is the lifeloop session, other than self, that last recorded
// the process's harness session and has ended: the harness resumed that
// session in this process. "" when the session is not known yet or none
// did.
func (p *Process) continues(self string) string {
	if p.SessionID == "" {
		return ""
	}
	recs, _ := statedir.ListSessions(p.StateDir)
	var last statedir.SessionRecord
	for _, r := range recs {
		if r.ID == self || !r.State.IsTerminal() || !slices.Contains(r.HarnessSessionIDs, p.SessionID) || r.StartedAt == nil {
			continue
		}
		if last.StartedAt == nil || r.StartedAt.After(*last.StartedAt) {
			last = r
		}
	}
	return last.ID
}

// parent is the session that started the process: the last of LaunchedBy
// that a lifeloop session recorded, else the last one, with no lifeloop
// session; nil when none.
func (p *Process) parent() *statedir.Parent {
	if len(p.LaunchedBy) == 0 {
		return nil
	}
	recs, _ := statedir.ListSessions(p.StateDir)
	for _, id := range slices.Backward(p.LaunchedBy) {
		for _, r := range recs {
			if slices.Contains(r.HarnessSessionIDs, id) {
				return &statedir.Parent{HarnessSessionID: id, SessionID: r.ID}
			}
		}
	}
	return &statedir.Parent{HarnessSessionID: p.LaunchedBy[len(p.LaunchedBy)-1]}
}

// exited returns a channel closed once the process has ended (nil, which
// never fires, without a process); it is left open when ctx ends first.
func (p *Process) exited(ctx context.Context) <-chan struct{} {
	if p == nil || p.Pid <= 0 {
		return nil
	}
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(processPoll)
		defer tk.Stop()
		for Alive(p.Pid) {
			select {
			case <-ctx.Done():
				return // the watch ends for another reason
			case <-tk.C:
			}
		}
		close(done)
	}()
	return done
}

// Alive reports whether process pid exists (a zombie counts until it is
// reaped).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

package watch

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestInterruptRecordsWhatWasWritten: a watch interrupted right after
// the harness appended its turn (the file's events not yet taken) still
// records it: the interrupted watch has as many receipts as one that
// ends after an idle wait.
func TestInterruptRecordsWhatWasWritten(t *testing.T) {
	turn, err := os.ReadFile(filepath.Join("..", "adapters", "claude", "testdata", "claude-tool-turn.transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(interrupt bool) Result {
		dir := t.TempDir()
		path := filepath.Join(dir, "transcript.jsonl")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		o := Options{
			StateDir: filepath.Join(dir, "state"), Adapter: "claude", Registry: builtin.Default(),
			Path: path, Cwd: dir, Env: []string{"HOME=" + dir},
			OnSession: func(string, string) {
				go func() {
					// Once the watch follows the file, the harness writes its
					// turn and, interrupted, the watch ends at once.
					waitOpened(t, path)
					f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
					if err == nil {
						_, err = f.Write(turn)
						_ = f.Close()
					}
					if err != nil {
						t.Error(err)
					}
					if interrupt {
						cancel()
					}
				}()
			},
		}
		if !interrupt {
			o.UntilIdle = time.Second
		}
		res, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	idle, interrupted := run(false), run(true)
	if idle.Reason != "idle" || interrupted.Reason != "interrupted" {
		t.Fatalf("reasons %q and %q", idle.Reason, interrupted.Reason)
	}
	if idle.Receipts < 5 || interrupted.Receipts != idle.Receipts {
		t.Errorf("interrupted at once: %d receipts, after an idle wait: %d", interrupted.Receipts, idle.Receipts)
	}
}

// waitOpened waits until this process holds path open: the watch follows it.
func waitOpened(t *testing.T, path string) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, fd := range fds {
			if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && p == path {
				return
			}
		}
	}
	t.Error("the watch never opened " + path)
}

// TestRenewalEndsTheWatchedSession: a followed process that ends while
// its session's renewal.json says stopping (a background session's
// renewal stopped it) ends the session as the renewal's stop — one
// session.ending (renewal_step ending) right before the one
// session.ended (the session's final end: the watch's reason, completed,
// stopped_by renewal and renewal_attempt, no renewal_step), after
// the harness's turn; without that mark (none, or a renewal that
// failed) the end is the plain watch_harness_exited with no
// session.ending.
func TestRenewalEndsTheWatchedSession(t *testing.T) {
	turn, err := os.ReadFile(filepath.Join("..", "adapters", "claude", "testdata", "claude-tool-turn.transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(mark *renewal.Status) []contract.LifecycleReceipt {
		dir := t.TempDir()
		path := filepath.Join(dir, "transcript.jsonl")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		child := exec.Command("sleep", "120")
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		// Waited once, by whichever comes first: the end the test causes or
		// the cleanup.
		wait := sync.OnceFunc(func() { _ = child.Wait() })
		t.Cleanup(func() { _ = child.Process.Kill(); wait() })
		state := filepath.Join(dir, "state")
		o := Options{
			StateDir: state, Adapter: "claude", Registry: builtin.Default(),
			Path: path, Cwd: dir, Env: []string{"HOME=" + dir},
			Process: &Process{Pid: child.Process.Pid, StateDir: state},
			OnSession: func(_, sdir string) {
				go func() {
					waitOpened(t, path)
					if err := os.WriteFile(path, turn, 0o600); err != nil {
						t.Error(err)
					}
					if mark != nil {
						if err := renewal.WriteStatus(renewal.StatusPath(sdir), *mark); err != nil {
							t.Error(err)
						}
					}
					_ = child.Process.Kill()
					wait()
				}()
			},
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := Run(ctx, o)
		if err != nil || res.Reason != ReasonHarnessExited {
			t.Fatalf("watch: %v, reason %q", err, res.Reason)
		}
		b, err := os.ReadFile(statedir.ReceiptsPath(state, res.SessionID))
		if err != nil {
			t.Fatal(err)
		}
		var rs []contract.LifecycleReceipt
		for line := range strings.Lines(string(b)) {
			var r contract.LifecycleReceipt
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		return rs
	}
	count := func(rs []contract.LifecycleReceipt, ev contract.Event) int {
		n := 0
		for _, r := range rs {
			if r.Event == ev {
				n++
			}
		}
		return n
	}

	rs := run(&renewal.Status{State: renewal.StateStopping, Attempt: 2, Resume: true})
	n := len(rs)
	if n < 3 || count(rs, contract.EventFrameEnded) != 1 || count(rs, contract.EventSessionEnding) != 1 || count(rs, contract.EventSessionEnded) != 1 ||
		rs[n-2].Event != contract.EventSessionEnding || rs[n-1].Event != contract.EventSessionEnded {
		t.Fatalf("renewed: %d receipts, want the turn, then one session.ending and one session.ended, last", n)
	}
	// The ending is the renewal's step; the end is the session's final
	// one: the watch's reason and completed phase (a reason renewal would
	// say the session goes on), the renewal's attempt and stopped_by.
	if s := rs[n-2].TelemetrySummary; s["reason"] != "renewal" || s["renewal_step"] != "ending" || s["renewal_attempt"] != float64(2) || s["resume"] != true {
		t.Errorf("renewed, session.ending: %v; want the renewal's ending step", s)
	}
	if s := rs[n-1].TelemetrySummary; s["reason"] != "watch_"+ReasonHarnessExited || s["renewal_step"] != nil || s["renewal_attempt"] != float64(2) ||
		s["phase"] != "completed" || s["outcome"] != "success" || s["stopped_by"] != "renewal" {
		t.Errorf("renewed, session.ended: %v; want the session's final end, stopped by the renewal", s)
	}

	for _, mark := range []*renewal.Status{nil, {State: renewal.StateFailed, Attempt: 1}} {
		rs := run(mark)
		end := rs[len(rs)-1]
		if count(rs, contract.EventSessionEnding) != 0 || end.Event != contract.EventSessionEnded || end.TelemetrySummary["reason"] != "watch_"+ReasonHarnessExited || end.TelemetrySummary["renewal_attempt"] != nil {
			t.Errorf("mark %+v: %d session.ending, end %s %v; want the plain watch_harness_exited", mark, count(rs, contract.EventSessionEnding), end.Event, end.TelemetrySummary)
		}
	}
}

package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memRecorder keeps moments in memory and mints sequential receipt ids.
type memRecorder struct {
	mu      sync.Mutex
	moments []Moment
}

func (r *memRecorder) Record(_ context.Context, m Moment) (contract.LifecycleReceipt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.moments = append(r.moments, m)
	return contract.LifecycleReceipt{ReceiptID: fmt.Sprintf("lfr_%d", len(r.moments)), Event: m.Event}, nil
}

func (r *memRecorder) events() []contract.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []contract.Event
	for _, m := range r.moments {
		out = append(out, m.Event)
	}
	return out
}

func (r *memRecorder) last(ev contract.Event) (Moment, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.moments) - 1; i >= 0; i-- {
		if r.moments[i].Event == ev {
			return r.moments[i], true
		}
	}
	return Moment{}, false
}

type fixture struct {
	cfg  Config
	rec  *memRecorder
	out  *testutil.SyncBuffer
	root string
}

func newFixture(t *testing.T, script string) *fixture {
	t.Helper()
	root := t.TempDir()
	id := "ses_01TEST0000000000000000000" + fmt.Sprint(len(t.Name())%10)
	if _, err := statedir.CreateSessionDir(root, id); err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	out := &testutil.SyncBuffer{}
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	return &fixture{
		rec: rec, out: out, root: root,
		cfg: Config{
			StateDir: root,
			Record:   statedir.SessionRecord{ID: id, AdapterID: "generic", Argv: []string{"sh", "-c", script}},
			Spec: ptyio.ChildSpec{Path: "/bin/sh", Args: []string{"-c", script},
				Env: []string{"PATH=/usr/bin:/bin"}},
			Terminal:      ptyio.TerminalConfig{In: stdin, Out: out},
			Recorder:      rec,
			ControlSocket: filepath.Join(statedir.SessionDir(root, id), "control.sock"),
			Grace:         2 * time.Second,
		},
	}
}

func (f *fixture) run(t *testing.T) Result {
	t.Helper()
	res, err := Run(context.Background(), f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestExitCodePassthrough(t *testing.T) {
	for _, code := range []int{0, 1, 3, 255} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			f := newFixture(t, fmt.Sprintf("echo hello; exit %d", code))
			res := f.run(t)
			if res.ExitCode != code {
				t.Fatalf("exit code %d, want %d", res.ExitCode, code)
			}
			want := []contract.Event{contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnded}
			if got := f.rec.events(); !equalEvents(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			ended, _ := f.rec.last(contract.EventSessionEnded)
			if got := ended.Summary[contract.SummaryExitStatus]; got != code {
				t.Fatalf("exit_status %v, want %d", got, code)
			}
			wantState := statedir.StateFailed
			if code == 0 {
				wantState = statedir.StateCompleted
			}
			if res.State != wantState {
				t.Fatalf("state %s, want %s", res.State, wantState)
			}
			rec, err := statedir.ReadSession(f.root, f.cfg.Record.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.State != wantState || rec.Exit == nil || rec.Exit.Code != code {
				t.Fatalf("session.json %+v", rec)
			}
			if !strings.Contains(f.out.String(), "hello") {
				t.Fatalf("output not relayed: %q", f.out.String())
			}
		})
	}
}

func TestSignalDeathReadFromStatus(t *testing.T) {
	f := newFixture(t, "kill -USR1 $$")
	res := f.run(t)
	if res.ExitCode != 128+10 {
		t.Fatalf("exit code %d, want 138", res.ExitCode)
	}
	if res.Class.Reason != "signal_10" || res.Class.Phase != contract.PhaseStopped {
		t.Fatalf("class %+v", res.Class)
	}
	ended, _ := f.rec.last(contract.EventSessionEnded)
	if ended.Summary[contract.SummarySignal] != 10 {
		t.Fatalf("summary %v", ended.Summary)
	}
}

func TestNotFoundAndNotExecutable(t *testing.T) {
	f := newFixture(t, "")
	f.cfg.Spec = ptyio.ChildSpec{Path: "no-such-command-lifeloop", Env: []string{"PATH=/usr/bin:/bin"}}
	res := f.run(t)
	if res.ExitCode != exitcode.NotFound || res.LaunchErr == nil {
		t.Fatalf("result %+v", res)
	}
	ended, ok := f.rec.last(contract.EventSessionEnded)
	if !ok || ended.Status != contract.StatusFailed || ended.Failure == nil {
		t.Fatalf("no failed session.ended: %+v", ended)
	}

	f = newFixture(t, "")
	p := filepath.Join(t.TempDir(), "noexec")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.cfg.Spec = ptyio.ChildSpec{Path: p, Env: []string{"PATH=/usr/bin:/bin"}}
	res = f.run(t)
	if res.ExitCode != exitcode.NotExecutable {
		t.Fatalf("result %+v", res)
	}
}

func TestAbortOverControlSocket(t *testing.T) {
	// The harness ignores SIGTERM, so abort must escalate to SIGKILL after
	// the grace period.
	f := newFixture(t, "trap '' TERM; echo ready; while :; do sleep 0.05; done")
	f.cfg.Grace = 300 * time.Millisecond
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return strings.Contains(f.out.String(), "ready") })
	var st control.Status
	if err := control.Call(context.Background(), f.cfg.ControlSocket, control.OpStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	if !st.Alive || st.Session.State != statedir.StateRunning || st.Processes < 1 {
		t.Fatalf("status %+v", st)
	}
	if err := control.Call(context.Background(), f.cfg.ControlSocket, control.OpAbort, nil, nil); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.State != statedir.StateAborted || res.ExitCode != 137 {
		t.Fatalf("result %+v", res)
	}
	ending, ok := f.rec.last(contract.EventSessionEnding)
	if !ok || ending.Summary["reason"] != contract.StoppedByAbort {
		t.Fatalf("session.ending %+v", ending)
	}
	if err := control.Call(context.Background(), f.cfg.ControlSocket, control.OpStatus, nil, nil); !errors.Is(err, control.ErrNotLive) {
		t.Fatalf("after exit: %v, want control.ErrNotLive", err)
	}
}

func TestPauseResume(t *testing.T) {
	f := newFixture(t, "echo ready; while :; do sleep 0.05; done")
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return strings.Contains(f.out.String(), "ready") })
	if err := control.Call(context.Background(), f.cfg.ControlSocket, control.OpPause, nil, nil); err != nil {
		t.Fatal(err)
	}
	var st control.Status
	_ = control.Call(context.Background(), f.cfg.ControlSocket, control.OpStatus, nil, &st)
	if st.Session.State != statedir.StatePaused {
		t.Fatalf("state %s after pause", st.Session.State)
	}
	if err := control.Call(context.Background(), f.cfg.ControlSocket, control.OpPause, nil, nil); err == nil {
		t.Fatal("pausing a paused session succeeded")
	}
	if err := control.Call(context.Background(), f.cfg.ControlSocket, control.OpResume, nil, nil); err != nil {
		t.Fatal(err)
	}
	_ = control.Call(context.Background(), f.cfg.ControlSocket, control.OpAbort, nil, nil)
	res := <-done
	if res.State != statedir.StateAborted {
		t.Fatalf("result %+v", res)
	}
	ticks := 0
	for _, e := range f.rec.events() {
		if e == contract.EventSupervisorTick {
			ticks++
		}
	}
	if ticks != 2 {
		t.Fatalf("%d state-change ticks, want 2 (pause, resume)", ticks)
	}
}

func TestMaxDuration(t *testing.T) {
	f := newFixture(t, "sleep 30")
	f.cfg.MaxDuration = 200 * time.Millisecond
	res := f.run(t)
	if res.State != statedir.StateFailed || res.Class.Reason != contract.StoppedByTimeout {
		t.Fatalf("result %+v", res)
	}
}

func TestGrandchildIgnoringTermIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "gc.pid")
	f := newFixture(t, fmt.Sprintf("sh -c 'trap \"\" TERM HUP; echo $$ > %s; exec sleep 30' & sleep 0.2; exit 0", pidFile))
	res := f.run(t)
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(b), &pid)
	testutil.WaitFor(t, func() bool { return !alive(pid) })
}

func TestTicksReportActivity(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "echo start; sleep 1.2; echo again; sleep 1")
	f.cfg.Tick = time.Minute // only activity changes produce ticks here
	f.cfg.IdleAfter = 400 * time.Millisecond
	f.run(t)
	var sawIdle, sawActive bool
	f.rec.mu.Lock()
	for _, m := range f.rec.moments {
		if m.Event != contract.EventSupervisorTick {
			continue
		}
		if m.Summary["trigger"] != tickActivityChange {
			t.Errorf("tick trigger %v, want %s", m.Summary["trigger"], tickActivityChange)
		}
		switch m.Summary["activity"] {
		case activityIdle:
			sawIdle = true
		case activityActive:
			sawActive = sawIdle // active again after idle
		}
		if m.Summary["pid"] == 0 {
			t.Errorf("tick without pid: %v", m.Summary)
		}
	}
	f.rec.mu.Unlock()
	if !sawIdle || !sawActive {
		for _, m := range f.rec.moments {
			t.Logf("%s %v", m.Event, m.Summary)
		}
		t.Fatalf("idle=%v active-again=%v", sawIdle, sawActive)
	}
}

func equalEvents(a, b []contract.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestObservationsChainAndCarryHarnessID(t *testing.T) {
	f := newFixture(t, "sleep 0.5")
	obs := make(chan Moment, 4)
	fc := &contract.FrameContext{FrameID: "turn-1", FrameClass: contract.FrameTopLevel}
	obs <- Moment{Event: contract.EventSessionStarted, HarnessSessionID: "hs-1"}
	obs <- Moment{Event: contract.EventFrameOpening, Frame: fc}
	obs <- Moment{Event: contract.EventFrameEnded, Frame: fc}
	close(obs)
	f.cfg.Observations = obs
	f.run(t)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	ids := map[contract.Event]string{}
	for i, m := range f.rec.moments {
		ids[m.Event] = fmt.Sprintf("lfr_%d", i+1)
	}
	for _, m := range f.rec.moments {
		switch m.Event {
		case contract.EventFrameEnded:
			if m.Parent == nil || *m.Parent != ids[contract.EventFrameOpening] {
				t.Errorf("frame.ended parent %v, want the frame.opening receipt %s", m.Parent, ids[contract.EventFrameOpening])
			}
			if m.HarnessSessionID != "hs-1" {
				t.Errorf("frame.ended harness session %q", m.HarnessSessionID)
			}
		case contract.EventSessionEnded:
			if m.HarnessSessionID != "hs-1" {
				t.Errorf("session.ended harness session %q, want hs-1", m.HarnessSessionID)
			}
		}
	}
	rec, err := statedir.ReadSession(f.root, f.cfg.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.HarnessSessionIDs) != 1 || rec.HarnessSessionIDs[0] != "hs-1" {
		t.Errorf("session.json harness ids %v", rec.HarnessSessionIDs)
	}
}

// TestProcessLeftInTheGroupIsKilled: a process the harness leaves running
// in its group (here one that ignores the terminal's hangup) is waited
// for within the drain's bound, then killed when the session ends.
func TestProcessLeftInTheGroupIsKilled(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := newFixture(t, "trap '' HUP; sleep 60 </dev/null >/dev/null 2>&1 & echo $! > "+pidFile+"; exit 0")
	res := f.run(t)
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatal(err)
	}
	// SIGKILL is sent before the session ends; the process dies a moment
	// later (long on a loaded machine).
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d left in the harness's group still runs after the session ended", pid)
		}
	}
}

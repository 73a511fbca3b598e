package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// renewFixture is a Claude session on a fake terminal whose first harness
// ignores the exit command, SIGINT and SIGTERM: a renewal's stop takes
// 4×grace, the window in which the loop must go on serving.
func renewFixture(t *testing.T) (*fixture, *fakeTerminal) {
	t.Helper()
	f := newFixture(t, "unused")
	ft := &fakeTerminal{behave: func(n int, p *fakeProc) {
		if n == 0 {
			p.exitOn = map[syscall.Signal]bool{syscall.SIGKILL: true}
		}
	}}
	f.cfg.OpenTerminal = func(ptyio.TerminalConfig) (Terminal, error) { return ft, nil }
	f.cfg.Adapter = adapters.AdapterOf(claude.Harness{})
	f.cfg.UserArgv = []string{"claude"}
	f.cfg.Spec = ptyio.ChildSpec{Path: "claude"}
	f.cfg.Record.AdapterID = "claude"
	f.cfg.Grace = 300 * time.Millisecond
	f.cfg.Tick = 50 * time.Millisecond
	return f, ft
}

func callCtl(t *testing.T, f *fixture, op string, args, out any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return control.Call(ctx, f.cfg.ControlSocket, op, args, out)
}

// renewAsync sends a renew request and returns where its answer arrives.
func renewAsync(t *testing.T, f *fixture, req renewal.Request) <-chan error {
	errc := make(chan error, 1)
	go func() {
		var out renewal.Outcome
		errc <- callCtl(t, f, control.OpRenew, req, &out)
	}()
	return errc
}

// TestRenewalBesideTheLoop: while a renewal waits for a harness that is
// slow to stop, status answers (renewing), a hook call is answered and
// ticks go on; the renewal then starts the next harness with its payload
// placed, and the stream stays coherent.
func TestRenewalBesideTheLoop(t *testing.T) {
	t.Parallel()
	f, ft := renewFixture(t)
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	errc := renewAsync(t, f, renewal.Request{Reason: "test", Payloads: []contract.PayloadEnvelope{testutil.Payload("pay_1", "continue here", devFrame)}})
	testutil.WaitFor(t, func() bool {
		select {
		case err := <-errc:
			t.Fatalf("renew ended before the harness stopped: %v", err)
		default:
		}
		var st control.Status
		return callCtl(t, f, control.OpStatus, nil, &st) == nil && st.Renewing
	})
	ticksBefore := countEvents(f.rec.events(), contract.EventSupervisorTick)

	start := time.Now()
	in, _ := json.Marshal(map[string]any{"session_id": "s-1", "hook_event_name": "SessionEnd", "reason": "other"})
	var reply hooks.HookReply
	if err := callCtl(t, f, control.OpHook, hooks.HookArgs{Adapter: "claude", Hook: "SessionEnd", Stdin: in}, &reply); err != nil {
		t.Fatalf("hook during a renewal: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the hook call during a renewal took %v", d)
	}
	testutil.WaitFor(t, func() bool { return countEvents(f.rec.events(), contract.EventSupervisorTick) > ticksBefore })

	if err := <-errc; err != nil {
		t.Fatalf("renew: %v", err)
	}
	if ft.count() != 2 {
		t.Fatalf("%d harnesses started, want 2", ft.count())
	}
	// The keys are released once the new harness reads its terminal key
	// by key (the fake does at once).
	testutil.WaitFor(t, func() bool {
		ft.mu.Lock()
		defer ft.mu.Unlock()
		return ft.released == 1
	})
	ft.mu.Lock()
	held, released := ft.held, ft.released
	ft.mu.Unlock()
	if held != 1 || released != 1 {
		t.Errorf("input held %d and released %d times during one renewal, want 1 and 1", held, released)
	}
	if got := ft.proc(0).gotSignals(); len(got) == 0 || got[len(got)-1] != syscall.SIGKILL {
		t.Errorf("the first harness got %v, want the stop sequence ending in SIGKILL", got)
	}
	second := ft.proc(1)
	if !containsArg(second.argv, "continue here") && !containsSubstring(second.argv, "pay_1") {
		t.Errorf("the relaunch does not carry the payload: %q", second.argv)
	}
	second.exit(ptyio.ExitStatus{Code: 0})
	res := <-done
	if res.State != statedir.StateCompleted {
		t.Errorf("state %s, want completed", res.State)
	}
	var sessionEvents []contract.Event
	for _, ev := range f.rec.events() {
		if ev != contract.EventSupervisorTick {
			sessionEvents = append(sessionEvents, ev)
		}
	}
	want := []contract.Event{
		contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnding, contract.EventSessionEnded,
		contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnded,
	}
	if !equalEvents(sessionEvents, want) {
		t.Errorf("events %v, want %v (the SessionEnd hook repeats the renewal's session.ending)", sessionEvents, want)
	}
}

// TestStopDuringRenewal: an abort while a renewal waits for the harness
// to stop ends the renewal (failed, its payload still stored) and the
// session, promptly.
func TestStopDuringRenewal(t *testing.T) {
	t.Parallel()
	f, ft := renewFixture(t)
	f.cfg.Grace = 2 * time.Second // the renewal alone would take 8 s
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	errc := renewAsync(t, f, renewal.Request{Payloads: []contract.PayloadEnvelope{testutil.Payload("pay_kept", "keep me", devFrame)}})
	testutil.WaitFor(t, func() bool {
		var st control.Status
		return callCtl(t, f, control.OpStatus, nil, &st) == nil && st.Renewing
	})
	start := time.Now()
	if err := callCtl(t, f, control.OpAbort, nil, nil); err != nil {
		t.Fatalf("abort during a renewal: %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("the renewal succeeded after an abort")
	}
	res := <-done
	if d := time.Since(start); d > f.cfg.Grace+1500*time.Millisecond {
		t.Errorf("the session took %v to end after the abort (grace %v)", d, f.cfg.Grace)
	}
	if res.State != statedir.StateAborted {
		t.Errorf("state %s, want aborted", res.State)
	}
	if ft.count() != 1 {
		t.Errorf("%d harnesses started; the renewal must not start one after the abort", ft.count())
	}
	store := &renewal.Store{Dir: statedir.ContinuationPath(f.root, f.cfg.Record.ID)}
	pending, err := store.Pending()
	if err != nil || len(pending) != 1 || pending[0].PayloadID != "pay_kept" {
		t.Errorf("continuation store after the abort: %v %v, want pay_kept still pending", pending, err)
	}
	st, _ := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(f.root, f.cfg.Record.ID)))
	if st.State != renewal.StateFailed {
		t.Errorf("renewal status %s, want failed", st.State)
	}
	if n := countEvents(f.rec.events(), contract.EventSessionEnded); n != 1 {
		t.Errorf("%d session.ended, want 1: %v", n, f.rec.events())
	}
}

var devFrame = contract.AcceptablePlacement{Placement: contract.PlacementDeveloperEquivalentFrame, Requirement: contract.RequirementRequired}

func countEvents(evs []contract.Event, ev contract.Event) int {
	n := 0
	for _, e := range evs {
		if e == ev {
			n++
		}
	}
	return n
}

func containsArg(argv []string, s string) bool {
	for _, a := range argv {
		if a == s {
			return true
		}
	}
	return false
}

func containsSubstring(argv []string, s string) bool {
	for _, a := range argv {
		if strings.Contains(a, s) {
			return true
		}
	}
	return false
}

// TestRelaunchNeverStarted: a renewal whose relaunch
// cannot be started (after its session.starting was told) fails, and
// the session's end then tells that harness session ended failed: it
// never started.
func TestRelaunchNeverStarted(t *testing.T) {
	t.Parallel()
	f, ft := renewFixture(t)
	ft.behave = nil // the first harness ends at SIGTERM
	ft.startErr = func(n int) error {
		if n > 0 {
			return errors.New("no such harness")
		}
		return nil
	}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	if err := <-renewAsync(t, f, renewal.Request{}); err == nil || !strings.Contains(err.Error(), "no such harness") {
		t.Errorf("renew: %v, want the start's failure", err)
	}
	_ = callCtl(t, f, control.OpAbort, nil, nil) // the session may have ended already
	<-done
	evs := f.rec.events()
	i := slices.Index(evs, contract.EventSessionStarting)
	j := slices.Index(evs[i+1:], contract.EventSessionStarting)
	if i < 0 || j < 0 {
		t.Fatalf("no relaunch's session.starting: %v", evs)
	}
	rest := evs[i+1+j:]
	if slices.Contains(rest, contract.EventSessionStarted) || countEvents(rest, contract.EventSessionEnded) != 1 {
		t.Fatalf("after the relaunch's session.starting: %v, want one session.ended", rest)
	}
	m, _ := f.rec.last(contract.EventSessionEnded)
	if m.Status != contract.StatusFailed || m.Failure == nil || m.Summary["relaunch"] != "not_started" {
		t.Errorf("the relaunch's session.ended: status %q failure %v summary %v; want failed, relaunch not_started", m.Status, m.Failure, m.Summary)
	}
}

// TestRelaunchThatDiesKeepsTheSession: a relaunch that exits before it
// takes keys fails the renewal (renew answers an error saying why, the
// relaunch's session.ended is failed) and the session goes on with the
// person's own command line instead of ending with the dead relaunch's
// exit code.
func TestRelaunchThatDiesKeepsTheSession(t *testing.T) {
	f, ft := renewFixture(t)
	ft.behave = func(n int, p *fakeProc) {
		if n == 1 {
			p.notReady = true
			p.exit(ptyio.ExitStatus{Code: 42})
		}
	}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	err := <-renewAsync(t, f, renewal.Request{Payloads: []contract.PayloadEnvelope{testutil.Payload("pay_1", "continue here", devFrame)}})
	if err == nil || !strings.Contains(err.Error(), "exit code 42") {
		t.Fatalf("renew: %v, want an error saying the relaunch exited with 42", err)
	}
	select {
	case res := <-done:
		t.Fatalf("the session ended (%+v) after a relaunch that died; want it kept", res)
	case <-time.After(200 * time.Millisecond):
	}
	if ft.count() != 3 || strings.Join(ft.proc(2).argv, " ") != strings.Join(ft.proc(0).argv, " ") {
		t.Fatalf("%d harnesses started; want the third to be the first's command line", ft.count())
	}
	var failed int
	f.rec.mu.Lock()
	for _, m := range f.rec.moments {
		if m.Event == contract.EventSessionEnded && m.Status == contract.StatusFailed {
			failed++
		}
	}
	f.rec.mu.Unlock()
	if failed != 1 {
		t.Errorf("%d failed session.ended, want 1 (the relaunch that died)", failed)
	}
	ft.proc(2).exit(ptyio.ExitStatus{Code: 0})
	if res := <-done; res.State != statedir.StateCompleted || res.ExitCode != 0 {
		t.Errorf("result %+v, want completed with the kept harness's exit 0", res)
	}
}

// TestRenewalClosesTheTurnItCutsOff: a turn open when a renewal stops the
// harness (here opened by Claude's prompt hook, never answered) is closed
// before the renewal's session.ending: frame.ended, stop_reason renewal,
// outcome cancelled.
func TestRenewalClosesTheTurnItCutsOff(t *testing.T) {
	f, ft := renewFixture(t)
	f.cfg.Grace = 50 * time.Millisecond
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	in, _ := json.Marshal(map[string]any{"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": "a question", "cwd": "/"})
	var reply hooks.HookReply
	if err := callCtl(t, f, control.OpHook, hooks.HookArgs{Adapter: "claude", Hook: "UserPromptSubmit", Stdin: in}, &reply); err != nil {
		t.Fatalf("prompt hook: %v", err)
	}
	testutil.WaitFor(t, func() bool { return countEvents(f.rec.events(), contract.EventFrameOpening) == 1 })
	if err := <-renewAsync(t, f, renewal.Request{}); err != nil {
		t.Fatalf("renew: %v", err)
	}
	ended, ok := f.rec.last(contract.EventFrameEnded)
	if !ok || ended.Summary["stop_reason"] != "renewal" || ended.Summary["outcome"] != "cancelled" {
		t.Fatalf("the cut-off turn's frame.ended: %+v (found %v); events %v", ended, ok, f.rec.events())
	}
	evs := f.rec.events()
	endedAt, endingAt := -1, -1
	for i, ev := range evs {
		switch {
		case ev == contract.EventFrameEnded:
			endedAt = i
		case ev == contract.EventSessionEnding && endingAt < 0:
			endingAt = i
		}
	}
	if endedAt > endingAt {
		t.Errorf("frame.ended at %d after the renewal's session.ending at %d: %v", endedAt, endingAt, evs)
	}
	ft.proc(1).exit(ptyio.ExitStatus{Code: 0})
	<-done
}

// TestAbortClosesTheTurnItCutsOff: a turn open when an abort stops the
// harness is closed before the abort's session.ending, as a renewal's
// is: frame.ended, stop_reason abort, outcome cancelled.
func TestAbortClosesTheTurnItCutsOff(t *testing.T) {
	f, ft := renewFixture(t)
	f.cfg.Grace = 50 * time.Millisecond
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	in, _ := json.Marshal(map[string]any{"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": "a question", "cwd": "/"})
	var reply hooks.HookReply
	if err := callCtl(t, f, control.OpHook, hooks.HookArgs{Adapter: "claude", Hook: "UserPromptSubmit", Stdin: in}, &reply); err != nil {
		t.Fatalf("prompt hook: %v", err)
	}
	testutil.WaitFor(t, func() bool { return countEvents(f.rec.events(), contract.EventFrameOpening) == 1 })
	var st map[string]any
	if err := callCtl(t, f, control.OpAbort, nil, &st); err != nil {
		t.Fatalf("abort: %v", err)
	}
	ft.proc(0).exit(ptyio.ExitStatus{Code: -1, Signaled: true, Signal: syscall.SIGTERM})
	<-done
	ended, ok := f.rec.last(contract.EventFrameEnded)
	if !ok || ended.Summary["stop_reason"] != "abort" || ended.Summary["outcome"] != "cancelled" {
		t.Fatalf("the cut-off turn's frame.ended: %+v (found %v); events %v", ended, ok, f.rec.events())
	}
	evs := f.rec.events()
	if e, s := slices.Index(evs, contract.EventFrameEnded), slices.Index(evs, contract.EventSessionEnding); e < 0 || s < 0 || e > s {
		t.Errorf("frame.ended at %d, the abort's session.ending at %d: %v", e, s, evs)
	}
}

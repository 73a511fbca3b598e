package launcher

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// turnFixture is renewFixture running, with a quick stop.
func turnFixture(t *testing.T) (*fixture, *fakeTerminal, <-chan Result) {
	t.Helper()
	f, ft := renewFixture(t)
	f.cfg.Grace = 50 * time.Millisecond
	f.cfg.ControlSocket = control.SocketIn(statedir.SessionDir(f.root, f.cfg.Record.ID)) // long test names
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	return f, ft, done
}

// frame emits a top-level frame moment through the control socket.
func frame(t *testing.T, f *fixture, ev contract.Event, id string) {
	t.Helper()
	if err := callCtl(t, f, control.OpEmit, control.EmitArgs{Event: ev, FrameID: id}, nil); err != nil {
		t.Fatalf("emit %s %s: %v", ev, id, err)
	}
}

// policyRenew asks for a renewal between turns, as a policy client does.
func policyRenew(t *testing.T, f *fixture) error {
	t.Helper()
	return <-renewAsync(t, f, renewal.Request{BetweenTurns: true,
		Policy: &renewal.Policy{Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71}})
}

// wantRefused checks err is a between-turns refusal saying why, and that
// nothing was recorded, stopped or written.
func wantRefused(t *testing.T, f *fixture, ft *fakeTerminal, err error, events int, why string) {
	t.Helper()
	r, ok := errors.AsType[*control.Refusal](err)
	if !ok || r.Code != control.CodeNotBetweenTurns {
		t.Fatalf("renew between turns: %v, want a %s refusal", err, control.CodeNotBetweenTurns)
	}
	if !strings.Contains(r.Message, why) || !strings.Contains(r.Message, "nothing was done") || strings.Contains(r.Message, "\n") {
		t.Errorf("refusal %q: want one line saying %q and that nothing was done", r.Message, why)
	}
	if got := len(f.rec.events()); got != events {
		t.Errorf("%d receipts after a refusal, want %d: %v", got, events, f.rec.events())
	}
	if ft.count() != 1 || len(ft.proc(0).gotSignals()) != 0 {
		t.Errorf("a refused renewal touched the harness: %d started, signals %v", ft.count(), ft.proc(0).gotSignals())
	}
	st, _ := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(f.root, f.cfg.Record.ID)))
	if st.State != renewal.StateNotAttempted {
		t.Errorf("renewal.json says %s after a refusal, want nothing written", st.State)
	}
}

func endSession(ft *fakeTerminal, done <-chan Result) {
	ft.proc(ft.count() - 1).exit(ptyio.ExitStatus{Code: 0})
	<-done
}

// TestBetweenTurnsRefusedWhileTurnOpen: a turn under way refuses a
// renewal asked between turns; nothing is recorded or stopped.
func TestBetweenTurnsRefusedWhileTurnOpen(t *testing.T) {
	f, ft, done := turnFixture(t)
	frame(t, f, contract.EventFrameOpening, "f1")
	frame(t, f, contract.EventFrameEnded, "f1")
	frame(t, f, contract.EventFrameOpening, "f2")
	wantRefused(t, f, ft, policyRenew(t, f), len(f.rec.events()), "turn is under way")
	endSession(ft, done)
}

// TestBetweenTurnsRefusedBeforeFirstTurn: before any turn has ended
// nothing says the harness is between turns.
func TestBetweenTurnsRefusedBeforeFirstTurn(t *testing.T) {
	f, ft, done := turnFixture(t)
	wantRefused(t, f, ft, policyRenew(t, f), len(f.rec.events()), "no turn has ended")
	endSession(ft, done)
}

// TestBetweenTurnsRefusedAfterKeyInTurn: a key typed after the latest
// turn opened (a draft in the harness's input box) refuses it.
func TestBetweenTurnsRefusedAfterKeyInTurn(t *testing.T) {
	f, ft, done := turnFixture(t)
	frame(t, f, contract.EventFrameOpening, "f1")
	ft.typeKey()
	frame(t, f, contract.EventFrameEnded, "f1")
	wantRefused(t, f, ft, policyRenew(t, f), len(f.rec.events()), "key was typed")
	endSession(ft, done)
}

// TestBetweenTurnsRenewsWhenQuiet: keys typed before the turn opened (its
// prompt) do not count; the renewal happens, with the policy recorded.
func TestBetweenTurnsRenewsWhenQuiet(t *testing.T) {
	f, ft, done := turnFixture(t)
	ft.typeKey()
	time.Sleep(time.Millisecond)
	frame(t, f, contract.EventFrameOpening, "f1")
	frame(t, f, contract.EventFrameEnded, "f1")
	if err := policyRenew(t, f); err != nil {
		t.Fatalf("renew between turns when quiet: %v", err)
	}
	if ft.count() != 2 {
		t.Fatalf("%d harnesses started, want 2", ft.count())
	}
	for _, ev := range []contract.Event{contract.EventSessionEnding, contract.EventSessionEnded, contract.EventSessionStarting, contract.EventSessionStarted} {
		m, _ := f.rec.last(ev)
		if p, _ := m.Summary["policy"].(map[string]any); p["client"] != renewal.PolicyClientID {
			t.Errorf("%s telemetry_summary %v, want the policy", ev, m.Summary)
		}
	}
	endSession(ft, done)
}

// TestPersonsRenewUnaffected: a renewal asked without BetweenTurns goes
// ahead with a turn open and a key just typed, as before.
func TestPersonsRenewUnaffected(t *testing.T) {
	f, ft, done := turnFixture(t)
	frame(t, f, contract.EventFrameOpening, "f1")
	ft.typeKey()
	if err := <-renewAsync(t, f, renewal.Request{}); err != nil {
		t.Fatalf("a person's renew: %v", err)
	}
	if ft.count() != 2 {
		t.Fatalf("%d harnesses started, want 2", ft.count())
	}
	endSession(ft, done)
}

// TestStatusTellsTurns: status says whether a turn is under way, when one
// last ended and when a key was last typed.
func TestStatusTellsTurns(t *testing.T) {
	f, ft, done := turnFixture(t)
	status := func() control.Status {
		t.Helper()
		var st control.Status
		if err := callCtl(t, f, control.OpStatus, nil, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := status(); st.FrameOpen || st.LastFrameEndedAt != nil || st.LastKeyAt != nil {
		t.Errorf("status before any turn: frame open %v, ended %v, key %v", st.FrameOpen, st.LastFrameEndedAt, st.LastKeyAt)
	}
	frame(t, f, contract.EventFrameOpening, "f1")
	if st := status(); !st.FrameOpen || st.LastFrameEndedAt != nil {
		t.Errorf("status in a turn: frame open %v, ended %v", st.FrameOpen, st.LastFrameEndedAt)
	}
	before := time.Now()
	frame(t, f, contract.EventFrameEnded, "f1")
	ft.typeKey()
	st := status()
	if st.FrameOpen || st.LastFrameEndedAt == nil || st.LastFrameEndedAt.Before(before.Add(-time.Second)) {
		t.Errorf("status after the turn: frame open %v, ended %v", st.FrameOpen, st.LastFrameEndedAt)
	}
	if st.LastKeyAt == nil || !st.LastKeyAt.Equal(ft.LastKey()) {
		t.Errorf("status last key %v, want %v", st.LastKeyAt, ft.LastKey())
	}
	endSession(ft, done)
}

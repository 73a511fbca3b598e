package launcher

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// noKeysTerminal starts harnesses that get no typed keys, as ptyio does
// when `run` has no terminal and passes its standard input through: they
// say they take keys at once (ptyio.Child.TakesKeys), since none are
// held for them, and that no keys are relayed (RelaysInput).
type noKeysTerminal struct{ *fakeTerminal }

type noKeysProc struct{ *fakeProc }

func (noKeysProc) RelaysInput() bool { return false }

func (t noKeysTerminal) Start(spec ptyio.ChildSpec) (Process, error) {
	p, err := t.fakeTerminal.Start(spec)
	if err != nil {
		return nil, err
	}
	return noKeysProc{p.(*fakeProc)}, nil
}

// noKeysFixture is renewFixture without a terminal.
func noKeysFixture(t *testing.T) (*fixture, *fakeTerminal) {
	f, ft := renewFixture(t)
	f.cfg.OpenTerminal = func(ptyio.TerminalConfig) (Terminal, error) { return noKeysTerminal{ft}, nil }
	return f, ft
}

// TestNoTTYRelaunchDies: with no terminal (and neither hooks nor a
// transcript), a relaunch that exits 42 at once is a failed renewal as
// under a terminal: renew says why, and the session goes on with the
// person's own command line instead of ending with the dead relaunch's
// code.
func TestNoTTYRelaunchDies(t *testing.T) {
	f, ft := noKeysFixture(t)
	ft.behave = func(n int, p *fakeProc) {
		if n == 1 { // a moment after its start, as a real one dies
			go func() {
				time.Sleep(50 * time.Millisecond)
				p.exit(ptyio.ExitStatus{Code: 42})
			}()
		}
	}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	// The fallback, the person's own command line, is not waited for:
	// only its exit could tell (no terminal, no hooks, no transcript).
	if err := <-renewAsync(t, f, renewal.Request{}); err == nil || !strings.Contains(err.Error(), "exit code 42") {
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
	ft.proc(2).exit(ptyio.ExitStatus{Code: 0})
	if res := <-done; res.State != statedir.StateCompleted || res.ExitCode != 0 {
		t.Errorf("result %+v, want completed with the kept harness's exit 0", res)
	}
}

// TestNoTTYRelaunchRanToItsEnd: with no terminal, hooks or transcript,
// a relaunch that exits 0 (a one-shot that did its work) is a delivered
// renewal: its payload receipt stands and the session ends with its
// exit, as it would have without the renewal.
func TestNoTTYRelaunchRanToItsEnd(t *testing.T) {
	f, ft := noKeysFixture(t)
	ft.behave = func(n int, p *fakeProc) {
		if n == 1 {
			p.exit(ptyio.ExitStatus{Code: 0})
		}
	}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	if err := <-renewAsync(t, f, renewal.Request{Payloads: []contract.PayloadEnvelope{testutil.Payload("pay_1", "continue here", devFrame)}}); err != nil {
		t.Fatalf("renew: %v, want delivered", err)
	}
	if res := <-done; res.State != statedir.StateCompleted || res.ExitCode != 0 {
		t.Errorf("result %+v, want completed with the relaunch's exit 0", res)
	}
	if ft.count() != 2 {
		t.Errorf("%d harnesses started, want 2 (no fallback after a relaunch that did its work)", ft.count())
	}
	started, ok := f.rec.last(contract.EventSessionStarted)
	if !ok || started.Summary["renewal_step"] != "started" || len(started.PayloadReceipts) != 1 || started.PayloadReceipts[0].Status != contract.PlacementOutcomeDelivered {
		t.Errorf("the relaunch's session.started: %+v (found %v), want renewal_step started with pay_1 delivered", started, ok)
	}
}

package launcher

import (
	"context"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/renewal"
)

// When is a relaunched harness started? A renewal answers then (waitReady),
// and a relaunch that exits first is a failed renewal: the session goes on
// with the person's own command line (renewal.ExitedBeforeReady). The
// evidence comes from the harness itself, never from the time it lived:
//
//   - Under a terminal (typed keys are relayed to it), it is ready once it
//     takes keys (ptyio.Child.TakesKeys): it reads its terminal key by key
//     and has drawn the adapter's ready text.
//   - Without one (`run` passed its standard input through: a script, a
//     pipe), no keys tell: it is ready once a hook call of its own arrives
//     (its SessionStart, or any later hook; a session end's hook does not
//     count: it may be the stopped harness's, arriving late).
//   - A relaunch that exits with code 0 before that ran to its end: a
//     one-shot (`claude -p`) that did its work is a delivered renewal.
//     Under a terminal only when a hook of its own had arrived (a TUI that
//     quits at once without taking keys has not started); without one in
//     any case, since with hooks off nothing else could have told.
//   - Any other exit before it is ready is a failed relaunch.
//   - One that shows no sign within readyWaitMax is taken as started; a
//     later exit ends the session as any exit does. With no terminal and
//     no hooks (`run --no-hooks` in a script) no sign can come: its exit
//     is the only evidence, and a renewal of a harness that lives waits
//     that bound.
//   - The person's own command line, started again after a relaunch that
//     died (the renewal's fallback), is not waited for where no sign can
//     come: whether it lives or dies, the session goes on as it does.
//
// A relaunch's transcript is not among the signs: a watcher that is not
// pinned to the relaunch's own session may still report the stopped
// harness's last lines after the relaunch started.

// keyRelayer is a harness process that says whether the person's typed
// keys reach it (ptyio.Child: not when `run` passes its standard input
// through).
type keyRelayer interface{ RelaysInput() bool }

// getsKeys reports whether typed keys are relayed to c.
func getsKeys(c Process) bool {
	r, ok := c.(keyRelayer)
	return !ok || r.RelaysInput()
}

// runSigns tells whether a hook call of the running harness has arrived
// since it started. Only the loop goroutine calls its methods; the
// channel they return is closed at the first sign.
type runSigns struct {
	of   Process
	hook string // the first hook that arrived, "" while none
	ch   chan struct{}
	// diedIn is the renewal whose relaunch exited before it was ready:
	// its next start is the fallback.
	diedIn *renewRun
}

// from returns the channel closed at c's first sign.
func (r *runSigns) from(c Process) <-chan struct{} {
	if r.ch == nil || r.of != c {
		r.of, r.hook, r.ch = c, "", make(chan struct{})
	}
	return r.ch
}

// note records that hook, a call of c, arrived.
func (r *runSigns) note(c Process, hook string) {
	r.from(c)
	if r.hook == "" {
		r.hook = hook
		close(r.ch)
	}
}

// noteHookSign records a hook call of the running harness as a sign that
// it runs its session, unless the call only reports a session's end.
func (s *supervisor) noteHookSign(m hooks.Mapped) {
	for _, mm := range m.Moments {
		if mm.Event == contract.EventSessionEnding || mm.Event == contract.EventSessionEnded {
			return
		}
	}
	s.signs.note(s.child, m.Hook)
}

// waitRelaunchReady is waitReady: it returns nil once the harness just
// started is ready (or ran to its end, or showed no sign in
// readyWaitMax), a *renewal.ExitedBeforeReady when it exited first.
func (p harnessProcess) waitRelaunchReady(ctx context.Context) error {
	var c Process
	var signed <-chan struct{}
	var fallback, hooked bool
	if !p.s.onLoop(func() {
		c, hooked = p.s.child, p.s.cfg.bridged()
		signed = p.s.signs.from(c)
		fallback = p.s.renewing != nil && p.s.signs.diedIn == p.s.renewing
	}) {
		return errLoopEnded
	}
	keys := getsKeys(c)
	if fallback && !keys && !hooked {
		return nil // no sign can come, and the session goes on with it either way
	}
	var pollC <-chan time.Time
	var hookC <-chan struct{}
	if keys {
		poll := time.NewTicker(keyHoldPoll) // nothing announces a change of terminal mode
		defer poll.Stop()
		pollC = poll.C
	} else {
		hookC = signed
	}
	limit := time.NewTimer(readyWaitMax)
	defer limit.Stop()
	for {
		select {
		case <-c.Done():
			return p.exitedFirst(c, keys, signed)
		default:
		}
		if keys && c.TakesKeys() {
			return nil
		}
		select {
		case <-pollC:
		case <-hookC:
			p.s.log.Info("renewal: the relaunched harness runs its session (a hook of its own arrived; no terminal tells when it takes keys)")
			return nil
		case <-c.Done():
		case <-limit.C:
			p.s.log.Warn("renewal: the relaunched harness showed no sign of running in time; taken as started")
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// exitedFirst judges a relaunch that exited before it was ready: nil
// when it ran to its end (see the rules above), else
// *renewal.ExitedBeforeReady with its exit.
func (p harnessProcess) exitedFirst(c Process, keys bool, signed <-chan struct{}) error {
	st := c.Wait()
	hooked := false
	select {
	case <-signed:
		hooked = true
	default:
	}
	switch {
	case hooked && !keys:
		return nil // ready at its hook; its exit ends the session as any exit
	case st.Code == 0 && !st.Signaled && (hooked || !keys):
		p.s.log.Info("renewal: the relaunched harness ran to its end (exit 0) before taking keys; taken as delivered")
		return nil
	}
	p.s.onLoop(func() { p.s.signs.diedIn = p.s.renewing })
	return &renewal.ExitedBeforeReady{Facts: contract.ExitFacts{Code: st.Code, Signaled: st.Signaled, Signal: int(st.Signal), FromWaitStatus: true}}
}

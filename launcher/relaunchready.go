package launcher

import (
	"context"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/renewal"
)

// When is a relaunched harness started? A renewal answers then (waitReady),
// and a relaunch that exits first is a failed renewal: the session goes on
// with the person's own command line (renewal.ExitedBeforeReady). The
// evidence comes from the harness, never from the time it lived:
//
//   - Under a terminal (typed keys are relayed to it), it is ready once it
//     takes keys (ptyio.Child.TakesKeys): raw mode, and the adapter's ready
//     text drawn. Any exit before is a failed relaunch.
//   - Without a terminal (`run` passed its standard input through: a
//     script, a pipe) no keys tell. Where a hook bridge or a transcript
//     watcher runs, the harness names its own session.started, and the
//     renewal's session.started (which carries the payload receipts) must
//     be offered before it, to be merged with it: the relaunch is taken as
//     started at once, as before. Open: a relaunch there that dies at once
//     is still reported delivered, and `run` ends with its code; telling
//     it needs the renewal to offer its session.started before it waits
//     (renewal.Orchestrator), since waiting for the relaunch's own hook
//     let that hook's session.started be recorded first and the renewal's,
//     with its payload receipts, dropped as already told (e2e
//     TestRenewCrashRecovery, TestContinueSessionFinishesInterruptedRenewal).
//   - Without a terminal, hooks or transcript (`run --no-hooks
//     --no-telemetry` in a script), its exit is the only evidence: exit 0
//     first means it ran to its end (a one-shot that did its work: the
//     renewal is delivered); any other exit first is a failed relaunch;
//     one still running after unwatchedStartBound is taken as started (a
//     later exit ends the session as any exit does). That bound is time,
//     the one thing such a launch leaves to judge by, and is short, so a
//     script's `renew` of a harness that lives answers in about 2 s.
//   - The fallback (the person's own command line, started again after a
//     relaunch that died) is not waited for where only its exit could
//     tell: whether it lives or dies, the session goes on as it does.

// unwatchedStartBound is how long a relaunch that nothing else vouches
// for (no terminal, hooks or transcript) must live to count as started.
const unwatchedStartBound = 2 * time.Second

// keyRelayer is a harness process that says whether the person's typed
// keys reach it (ptyio.Child: not when `run` passes its standard input
// through).
type keyRelayer interface{ RelaysInput() bool }

// getsKeys reports whether typed keys are relayed to c.
func getsKeys(c Process) bool {
	r, ok := c.(keyRelayer)
	return !ok || r.RelaysInput()
}

// waitRelaunchReady is waitReady: nil once the harness just started is
// ready (or ran to its end, or showed no sign within its bound), a
// *renewal.ExitedBeforeReady when it exited first.
func (p harnessProcess) waitRelaunchReady(ctx context.Context) error {
	var c Process
	var namesItself, fallback bool
	if !p.s.onLoop(func() {
		c = p.s.child
		namesItself = p.s.cfg.bridged() || p.s.cfg.Telemetry != nil
		fallback = p.s.renewing != nil && p.s.relaunchDied == p.s.renewing
	}) {
		return errLoopEnded
	}
	keys := getsKeys(c)
	if !keys && (namesItself || fallback) {
		return nil // see above
	}
	var pollC <-chan time.Time
	if keys {
		poll := time.NewTicker(keyHoldPoll) // nothing announces a change of terminal mode
		defer poll.Stop()
		pollC = poll.C
	}
	bound := readyWaitMax
	if !keys {
		bound = unwatchedStartBound
	}
	limit := time.NewTimer(bound)
	defer limit.Stop()
	for {
		select {
		case <-c.Done():
			return p.exitedFirst(c, keys)
		default:
		}
		if keys && c.TakesKeys() {
			return nil
		}
		select {
		case <-pollC:
		case <-c.Done():
		case <-limit.C:
			if keys {
				p.s.log.Warn("renewal: the relaunched harness showed no sign of being ready in time; taken as started")
			} else {
				p.s.log.Info("renewal: the relaunched harness is still running; taken as started", "after", bound)
			}
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// exitedFirst judges a relaunch that exited before it was ready: nil
// when, with no terminal, it exited 0 (it ran to its end), else
// *renewal.ExitedBeforeReady with its exit.
func (p harnessProcess) exitedFirst(c Process, keys bool) error {
	st := c.Wait()
	if !keys && st.Code == 0 && !st.Signaled {
		p.s.log.Info("renewal: the relaunched harness ran to its end (exit 0); taken as delivered")
		return nil
	}
	p.s.onLoop(func() { p.s.relaunchDied = p.s.renewing })
	return &renewal.ExitedBeforeReady{Facts: contract.ExitFacts{Code: st.Code, Signaled: st.Signaled, Signal: int(st.Signal), FromWaitStatus: true}}
}

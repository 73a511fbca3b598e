package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/seal"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/stream"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// A renewal runs on a goroutine of its own, beside the supervisor loop,
// so signals, ticks, telemetry, status and hook calls are served while
// the harness is stopped and started again. It touches session state
// only through onLoop, which runs a function on the loop goroutine; the
// loop does not treat the stopped harness's exit as the session's end
// while a renewal runs. A stop (SIGINT, abort, --max-duration) during a
// renewal cancels it: the renewal ends as failed in renewal.json, its
// payloads stay in the continuation store, and the loop ends the session
// as for any stop.

// renewRun is a renewal in progress.
type renewRun struct{ cancel context.CancelCauseFunc }

// renewResult is how a renewal ended; reply is the control caller
// waiting for it (nil for a recovery).
type renewResult struct {
	out   renewal.Outcome
	err   error
	reply chan controlReply
}

// errLoopEnded: the supervisor loop has ended.
var errLoopEnded = errors.New("the session has ended")

// errStopping ends a renewal the session's stop cut short.
func errStopping(reason string) error {
	return fmt.Errorf("the session is stopping (%s): the renewal is abandoned and its payloads stay stored", reason)
}

// onLoop runs f on the loop goroutine and waits for it. It returns false
// when the loop has ended.
func (s *supervisor) onLoop(f func()) bool {
	done := make(chan struct{})
	select {
	case s.calls <- func() { f(); close(done) }:
	case <-s.loopDone:
		return false
	}
	<-done
	return true
}

// renewals is the supervisor as its renewals drive it: the loop's side of
// the renewal orchestrator (renewal.Orchestrator), which runs beside it.
// Its methods run on the loop goroutine unless they say otherwise.
type renewals struct{ s *supervisor }

// start runs the renewal begin returns (the orchestrator's Renew or
// Recover, handed the current harness session id) beside the loop: its
// goroutine does the actions the renewal asks for (drive).
func (r renewals) start(begin func(harnessID string) *renewal.Steps, reply chan controlReply) {
	s := r.s
	steps := begin(s.d.HarnessSession())
	ctx, cancel := context.WithCancelCause(s.ctx)
	s.renewing = &renewRun{cancel: cancel}
	// Keys typed while the harness is stopped and started again wait for
	// the new one (keyhold.go).
	s.holdKeys()
	orch := s.orch
	go func() { // ends with the renewal, which is bounded (3×grace to stop, one start)
		if ad := s.cfg.Adapter; ad != nil && ad.TakesFacts() && orch != nil {
			// The relaunch's command line depends on facts about the
			// harness: read once per session, off the loop.
			orch.Adapter = ad.WithFacts(s.version.harnessFacts(ctx))
		}
		out, err := r.drive(ctx, steps)
		cancel(nil)
		s.renewed <- renewResult{out: out, err: err, reply: reply}
	}()
}

// relaunchSealed reports whether the renewal this continuation finishes
// had recorded its relaunch's session.starting before its wrapper was
// lost, and the seal ended that harness session (seal.Interrupted): the
// renewal records no second session.starting, so the continuation opens
// its harness session with its own.
func (r renewals) relaunchSealed() bool {
	s := r.s
	if seal.Interrupted(s.cfg.Prior) == 0 {
		return false
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(s.cfg.StateDir, s.rec.ID)))
	return err == nil && st.State.InProgress() && st.StartingReceiptID != ""
}

// done runs on the loop when a renewal has ended.
func (rs renewals) done(r renewResult) {
	s := rs.s
	s.renewing = nil
	defer s.releaseKeysWhenRead() // to the harness running once this returns
	if r.err != nil {
		s.log.Warn("renewal failed", "err", r.err)
	} else {
		s.log.Info("renewal done", "state", r.out.State, "attempt", r.out.Attempt)
	}
	if r.reply != nil {
		if r.err != nil {
			r.reply <- controlReply{nil, r.err}
		} else {
			r.reply <- controlReply{r.out, nil}
		}
	}
	if s.child != nil || s.done {
		return
	}
	// A recovery that did not start the harness: start it now, unless the
	// session was stopped meanwhile.
	_, _ = s.recordStarting()
	if s.stopping {
		s.done = true
		return
	}
	if res, failed := s.launch(); failed {
		s.failedResult = &res
		s.done = true
	}
}

// drive does the actions of a renewal until it ends, on the renewal's
// goroutine: a moment to record goes to the loop (record), a stop and a
// start to the harness (harnessProcess).
func (r renewals) drive(ctx context.Context, steps *renewal.Steps) (renewal.Outcome, error) {
	var ans renewal.Answer
	for {
		act, ok := steps.Next(ans)
		if !ok {
			return steps.Result()
		}
		ans = renewal.Answer{}
		switch act.Kind {
		case renewal.ActRecord:
			ans.ReceiptID = r.record(act.Event, act.Summary, act.PayloadReceipts)
		case renewal.ActStop:
			ans.Exit, ans.Err = harnessProcess(r).Stop(ctx, act.Signal, act.Grace)
		case renewal.ActStart:
			ans.Err = harnessProcess(r).Start(ctx, launchInput{kind: act.Launch, argv: act.Argv, payloads: act.Payloads})
		default:
			ans.Err = fmt.Errorf("renewal: unknown action %d", act.Kind)
		}
	}
}

// harnessProcess is the running harness as a renewal's stops and starts
// reach it (renewal.ActStop, renewal.ActStart). Its methods run on the renewal's
// goroutine.
type harnessProcess struct{ s *supervisor }

// Stop ends the current harness without acting on its screen: it sends
// first (the adapter's StopSignal), then SIGTERM and SIGKILL, to the
// harness's process group, waiting up to grace after each. Nothing is
// typed into the harness's terminal: an Enter would approve an open
// permission dialog or send the person's draft as a turn. It is bounded
// by 3×grace and returns how the harness ended. When ctx ends (the
// session is being stopped) it returns at once: the loop owns the
// harness then.
//
// The harness has stopped once the process lifeloop started has exited
// and no process of its group is left (groupStopped): a launcher the
// signal ends at once may leave the program it runs still shutting
// down, and a relaunch started beside it would share the session's
// files and locks with it (measured with a wrapper that ends on SIGTERM
// at once while its child writes the session's end afterwards: the
// resumed harness started first, and one that finds its session still in
// use asks the person whether to go on).
func (p harnessProcess) Stop(ctx context.Context, first syscall.Signal, grace time.Duration) (contract.ExitFacts, error) {
	var c Process
	if !p.s.onLoop(func() { c = p.s.child }) {
		return contract.ExitFacts{}, errLoopEnded
	}
	if c == nil { // nothing runs (a wrapper continuing a crashed session)
		return contract.ExitFacts{Code: -1, StoppedBy: contract.StoppedByRenewal}, nil
	}
	// stopped is also closed when ctx ends: the session's stop then owns
	// the harness, whichever of the two a select takes.
	exited := func() (contract.ExitFacts, error) {
		if ctx.Err() != nil {
			return contract.ExitFacts{}, context.Cause(ctx)
		}
		st := c.Wait()
		return contract.ExitFacts{Code: st.Code, Signaled: st.Signaled, Signal: int(st.Signal), StoppedBy: contract.StoppedByRenewal, FromWaitStatus: true}, nil
	}
	watch, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	stopped := groupStopped(watch, c)
	for _, sig := range stopSteps(first) {
		p.s.log.Info("renewal: stopping the harness", "signal", sigName(sig))
		_ = c.SignalGroup(sig)
		t := time.NewTimer(grace)
		select {
		case <-stopped:
			t.Stop()
			return exited()
		case <-ctx.Done():
			t.Stop()
			return contract.ExitFacts{}, context.Cause(ctx)
		case <-t.C:
		}
	}
	select {
	case <-stopped:
		return exited()
	case <-ctx.Done():
		return contract.ExitFacts{}, context.Cause(ctx)
	}
}

// groupStopped returns a channel closed once c has exited and no process
// of its group (pgid c.Pid()) is left but zombies, or when ctx ends. The
// group is looked at again as soon as the members found have all exited
// (procfs.WatchExits), else after groupPoll, then less and less often
// up to groupPollMax. Its goroutine ends with the channel.
func groupStopped(ctx context.Context, c Process) <-chan struct{} {
	out := make(chan struct{})
	go func() { // ends when the group is gone or ctx ends
		defer close(out)
		select {
		case <-c.Done():
		case <-ctx.Done():
			return
		}
		every := groupPoll
		var exits <-chan struct{}
		var watched []int
		for {
			left, pids := liveMembers(c.Pid())
			if len(left) == 0 {
				return
			}
			// As the drain's watch: members whose end was reported but
			// that /proc still shows are left to the poll.
			if exits == nil && !slices.Equal(pids, watched) {
				watched, exits = pids, procfs.WatchExits(pids, ctx.Done())
			}
			t := time.NewTimer(every)
			select {
			case <-exits:
				exits = nil
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			t.Stop()
			every = min(2*every, groupPollMax)
		}
	}()
	return out
}

// stopSteps is the order of a renewal's stop signals: first, then
// SIGTERM and SIGKILL (each once).
func stopSteps(first syscall.Signal) []syscall.Signal {
	steps := []syscall.Signal{first}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if sig != first {
			steps = append(steps, sig)
		}
	}
	return steps
}

// Start launches the start in plans on the same terminal: raw mode, size
// and the person's typing carry over to the new harness. The loop does
// it. It returns once the new harness is ready (waitReady); a second
// start in one renewal (the fallback after a relaunch that died) holds
// typed keys again.
func (p harnessProcess) Start(ctx context.Context, in launchInput) error {
	if len(in.argv) == 0 {
		return fmt.Errorf("renewal: empty command line")
	}
	errc := make(chan error, 1)
	if !p.s.onLoop(func() {
		if p.s.keyReleased == p.s.keyHold {
			p.s.holdKeys()
		}
		renewals(p).relaunch(in, func(err error) { errc <- err })
	}) {
		return errLoopEnded
	}
	if err := <-errc; err != nil { // the loop always answers: the drain before a relaunch is bounded
		return err
	}
	return p.waitReady(ctx)
}

// readyWaitMax bounds how long a renewal waits for the relaunched harness
// to take keys: the renew call must be answered within the control
// socket's bound (60 s) after a stop that may take 3×grace. A harness
// still starting then is taken as started (typed keys still wait for it,
// up to keyHoldMax); one that dies later ends the session as any exit.
const readyWaitMax = 20 * time.Second

// waitReady waits until the harness just started takes keys (its prompt is
// up: a renewal returns then, not when the harness names its session),
// and returns *renewal.ExitedBeforeReady when it exits first. A harness
// that shows no sign of taking keys in readyWaitMax is taken as started.
// Without a terminal, see relaunchready.go.
func (p harnessProcess) waitReady(ctx context.Context) error {
	return p.waitRelaunchReady(ctx)
}

// relaunch starts argv as the session's new harness and calls done with
// the result. A harness pinned to a new session gets a new telemetry
// watcher, after what the old transcript still holds is recorded.
//
// A hook bridge that cannot be given to the relaunched harness (its file
// became unreadable since the first launch) is left out, as a first
// launch leaves it out: the harness starts without it, one
// capability.degraded says why, and later relaunches go without it.
func (r renewals) relaunch(in launchInput, done func(error)) {
	s := r.s
	if s.stopping {
		done(errStopping(s.stoppedBy))
		return
	}
	plan, err := r.recipe().plan(in)
	if err != nil {
		done(err)
		return
	}
	argv, env, pinned := plan.argv, plan.env, plan.pinned
	start := func() {
		if s.stopping {
			done(errStopping(s.stoppedBy))
			return
		}
		if pinned != "" {
			previous := s.obs
			s.obs = s.cfg.Telemetry.start(pinned, s.cfg.Now())
			if previous != nil {
				for m := range previous { // closed: its watcher stopped
					s.observed(m)
				}
			}
		}
		if why := plan.bridgeUnavailable; why != nil {
			s.log.Warn("renewal: hook bridge not installed; the harness runs without it", "reason", why.Reason)
			s.cfg.Recipe.bridge = nil
			s.obs = withBridgeUnavailable(s.ctx, s.obs, why, s.cfg.Now())
		}
		err := r.startAgain(argv, env, pinned)
		if err == nil {
			// Keys go to the new harness as soon as it takes them; the
			// renewal may still wait for it to name its session.
			s.releaseKeysWhenRead()
		}
		done(err)
	}
	if pinned == "" {
		start()
		return
	}
	s.beginDrain(start)
}

// recipe is the launch recipe of a relaunch: the first launch's, with
// the renewal's adapter (which knows the harness's facts).
func (rs renewals) recipe() launchRecipe {
	s := rs.s
	r := s.cfg.Recipe
	if r.ad == nil {
		r = launchRecipe{bridge: s.cfg.BridgeArgs, pin: s.cfg.Telemetry != nil}
	}
	r.ad = s.cfg.Adapter
	if s.orch != nil && s.orch.Adapter != nil {
		r.ad = s.orch.Adapter
	}
	if r.ad == nil {
		r.bridge, r.bridgeAt, r.pin, r.files = nil, nil, false, nil
	}
	return r
}

// startAgain starts the relaunched harness, with env (nil: the first
// start's environment).
func (r renewals) startAgain(argv, env []string, pinned string) error {
	s := r.s
	if env == nil {
		env = s.cfg.Spec.Env
	}
	spec := ptyio.ChildSpec{Path: argv[0], Args: argv[1:], Env: processEnv(s.cfg.ProcessEnv, s.processes, env), Dir: s.cfg.Spec.Dir, ReadyText: s.cfg.Adapter.ReadyText(), Screen: s.cfg.Spec.Screen}
	child, err := s.term.Start(spec)
	if err != nil {
		return err
	}
	if pinned != "" {
		s.d.Step(stream.Fact{Kind: stream.Bind, Moment: Moment{HarnessSessionID: pinned}})
	}
	s.rec.Argv = adapters.RedactPlacement(argv)
	if s.rec.State == statedir.StatePending {
		s.rec.State = statedir.StateRunning
	}
	s.relaunchPending = false
	s.attach(child, argv[0])
	s.rereadVersion(spec)
	s.log.Info("renewal: harness started again", "pid", child.Pid())
	return nil
}

// orchestrator returns the session's renewal orchestrator, built on
// first use.
func (r renewals) orchestrator() *renewal.Orchestrator {
	s := r.s
	if s.orch == nil {
		dir := statedir.SessionDir(s.cfg.StateDir, s.rec.ID)
		s.orch = &renewal.Orchestrator{
			Adapter:    s.cfg.Adapter,
			Argv:       s.cfg.UserArgv,
			Store:      &renewal.Store{Dir: statedir.ContinuationPath(s.cfg.StateDir, s.rec.ID), Now: s.cfg.Now},
			StatusPath: renewal.StatusPath(dir),
			Now:        s.cfg.Now,
			Grace:      s.cfg.Grace,
		}
	}
	return s.orch
}

// record records one step of a renewal (from its goroutine) and
// returns the receipt id. The relaunch's session.starting opens a new
// harness session. Its session.started is recorded at once for a resumed
// harness, which keeps the session it had (the id its command line
// resumes); a fresh one's waits, like the first one, for the harness to
// name its session, and the renewal does not wait for it: the step
// returns "" and the receipt follows as evidence comes. A summary's
// failure_class (a relaunch that died) marks the receipt failed.
// It runs on the renewal's goroutine.
func (r renewals) record(ev contract.Event, summary map[string]any, prs []contract.PayloadReceipt) string {
	s := r.s
	idc := make(chan string, 1)
	reply := func(id string) { idc <- id }
	m := Moment{Event: ev, Summary: summary, PayloadReceipts: prs}
	if fc, ok := summary["failure_class"].(string); ok {
		c := contract.FailureClass(fc)
		m.Status, m.Failure = contract.StatusFailed, &c
	}
	if !s.onLoop(func() {
		if ev == contract.EventSessionStarting {
			if s.stopping {
				// No relaunch runs once the session stops (relaunch
				// refuses it): the session's own end is told, once
				// (the keeper drops an end already told).
				reply("")
				return
			}
			s.relaunchPending = true
		}
		// The step comes after everything observed before it (the
		// keeper's stream.Renewal).
		resume, _ := summary["resume"].(bool)
		now := s.cfg.Now()
		res, _, _ := s.d.Ask(stream.Fact{Kind: stream.Renewal, Moment: m, Now: now, Resumed: resume, Reason: contract.StoppedByRenewal,
			PayloadsWaitHook: len(s.pendingFor(contract.EventSessionStarted)) > 0 && s.cfg.bridged()})
		logHeld(s.log, s.d, now)
		reply(res.Receipt.ReceiptID)
	}) {
		return ""
	}
	return <-idc
}

// onRenew handles the renew control operation: the renewal starts beside
// the loop and answers the caller when it ends.
func (r renewals) onRenew(raw json.RawMessage, reply chan controlReply) {
	s := r.s
	fail := func(err error) { reply <- controlReply{nil, err} }
	switch {
	case s.cfg.Adapter == nil:
		fail(fmt.Errorf("renew: this session has no adapter to relaunch with"))
		return
	case s.stopping:
		fail(fmt.Errorf("renew: the session is stopping"))
		return
	case s.renewing != nil:
		fail(fmt.Errorf("renew: a renewal is already in progress; see `lifeloop renewal status`"))
		return
	case s.drain != nil:
		fail(fmt.Errorf("renew: the harness has exited"))
		return
	}
	var req renewal.Request
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &req); err != nil {
			fail(fmt.Errorf("renew: bad arguments: %w", err))
			return
		}
	}
	if req.BetweenTurns {
		if err := s.notBetweenTurns(); err != nil {
			fail(err)
			return
		}
	}
	orch := r.orchestrator()
	r.start(func(hid string) *renewal.Steps { return orch.Renew(req, hid) }, reply)
}

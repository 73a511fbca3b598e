package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/notify"
	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/seal"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/stream"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// Defaults of Config's durations.
const (
	DefaultTick      = 10 * time.Second
	DefaultIdleAfter = 5 * time.Second
	DefaultGrace     = 5 * time.Second
)

// Config describes one supervised session. The caller has created the
// session directory and the Recorder; Run owns everything else.
type Config struct {
	// StateDir is the state root; Record.ID names the session in it.
	StateDir string
	// Record is the initial session.json content (ID, adapter, argv, cwd).
	Record statedir.SessionRecord
	// Spec is the harness to start (argv already prepared by the adapter,
	// Env complete).
	Spec ptyio.ChildSpec
	// Terminal is the user's side; OpenTerminal opens it (default OpenPTY;
	// tests use a fake harness without a PTY).
	Terminal     ptyio.TerminalConfig
	OpenTerminal func(ptyio.TerminalConfig) (Terminal, error)
	// Tick is the supervisor.tick interval; 0 turns ticks off.
	Tick time.Duration
	// IdleAfter is how long without output makes the harness idle.
	IdleAfter time.Duration
	// Grace is how long a stopped harness gets before SIGKILL.
	Grace time.Duration
	// BindWait bounds how long session.started waits for the harness to
	// name its session (default DefaultBindWait).
	BindWait time.Duration
	// PinnedSessionID is the harness session id the launch chose
	// (adapters.SessionPinner), or "".
	PinnedSessionID string
	// MaxDuration, when positive, stops the harness after that long
	// (state failed, reason timeout).
	MaxDuration time.Duration
	// Recorder records receipts.
	Recorder Recorder
	// Observations are lifecycle moments observed elsewhere (telemetry);
	// nil when there are none. Closed by the producer.
	Observations <-chan Moment
	// Telemetry, when set, runs the watcher behind Observations; a
	// renewal that relaunches the harness into a new session restarts it.
	Telemetry *telemetryRunner
	// ProcessEnv, when set, gives variables the harness process numbered
	// n (processenv.go) gets in place of their values in Spec.Env, at the
	// launch and at each relaunch.
	ProcessEnv func(n int) []string
	// Recipe completes a relaunch's command line as it completed the
	// first launch's (hook bridge, session pin, placement files); the
	// zero recipe, as in tests, leaves it as the renewal placed it.
	Recipe launchRecipe
	// HookRecorder records hook moments that can place payloads, with
	// synchronous clients; nil records them like any other moment.
	HookRecorder SyncRecorder
	// Recover finishes a renewal a crashed wrapper left in progress before
	// starting the harness (run --continue-session); Prior are the
	// session's receipts so far, so the stream stays coherent across
	// wrappers.
	Recover bool
	Prior   []contract.LifecycleReceipt
	// Facts are what the launch read about the harness for its argv
	// methods (adapters.Facts), nil when it read none; a renewal reads
	// them, once, when it first needs them.
	Facts *adapters.Facts
	// Adapter is the session's adapter and UserArgv the command line as
	// the user gave it; renewal relaunches with them. BridgeArgs are the
	// hook bridge's launch arguments, added again at a relaunch;
	// BridgeEnv the variables it added to Spec.Env (which a relaunch
	// keeps).
	Adapter    *adapters.Adapter
	UserArgv   []string
	BridgeArgs []string
	BridgeEnv  []string
	// BridgeHooks are the hooks the bridge installed and BridgeFrames the
	// frame events they report natively (adapters.Adapter.LaunchHooks);
	// nil BridgeHooks: all of the adapter's.
	BridgeHooks  *hooks.Spec
	BridgeFrames []contract.Event
	// Registry answers hook calls that name another adapter than the
	// session's; nil serves the session's adapter only.
	Registry *adapters.Registry
	// HookPayloads wait for the first hook that reports HookPayloadsAt
	// (session.started, the default, or frame.opening) and can place them.
	HookPayloads   []contract.PayloadEnvelope
	HookPayloadsAt contract.Event
	// StartPayloads were placed into the harness's command line (launch
	// placement); session.starting records their payload receipts.
	StartPayloads []contract.PayloadEnvelope
	// HandleSignals installs the signal policy (see the package doc).
	HandleSignals bool
	// signals, when set, are the policy's signals already being caught
	// (Launch's); Run then neither starts nor releases them.
	signals *SignalCatch
	// hookDoor, when set, takes the hook calls the harness posts over
	// HTTP (hookdoor.go); they reach the loop as control calls do.
	hookDoor *hookDoor
	// attention, when set, brings the screen's and the harness files'
	// attention facts (attention_sources.go).
	attention *attentionSources
	// ControlSocket is the control socket path; empty disables it.
	ControlSocket string
	// Companion is the command line of a client that runs beside the
	// session (Options.Companion), with CompanionEnv: started once the
	// harness is, stopped after session.ended (companion.go).
	Companion    []string
	CompanionEnv []string
	// Notify: Options.Notify.
	Notify notify.Config
	// Log receives lifeloop's own messages (never the terminal).
	Log *slog.Logger
	// passed, when set, is called on each pass of the loop (its wake-ups,
	// counted by the idle-cost benchmark).
	passed func()
	// Now is the clock.
	Now func() time.Time
}

// Result is how a supervised session ended.
type Result struct {
	// ExitCode is the harness's exit code (128+N for signal N), or
	// 125/126/127 when it could not be launched.
	ExitCode int
	State    statedir.SessionState
	Class    contract.ExitClass
	// LaunchErr is set when the harness never started; its message is the
	// one line to print after the terminal is restored.
	LaunchErr error
	// SessionID is the lifeloop session (set by Launch).
	SessionID string
	// Unrecorded counts receipts the ledger could not record (a full
	// disk), and UnrecordedCause says why.
	Unrecorded      int
	UnrecordedCause error
}

// controlCall is one control request handed to the loop. ctx is the
// caller's connection: a call whose caller gave up is not executed.
type controlCall struct {
	ctx   context.Context
	req   control.Request
	reply chan controlReply
}

type controlReply struct {
	res any
	err error
}

// supervisor is the state of one Run; only the loop goroutine touches it.
// A renewal runs beside the loop and reaches this state only through
// onLoop (renew.go).
type supervisor struct {
	cfg   Config
	ctx   context.Context
	log   *slog.Logger
	rec   statedir.SessionRecord
	term  Terminal
	child Process // nil until the first harness starts
	// version reads the harness's version (version.go).
	version *versionReader

	startedAt time.Time
	stopping  bool
	stoppedBy string
	aborting  bool
	// relaunchPending: a renewal recorded its relaunch's session.starting
	// and no relaunched harness has started since (cleared by startAgain).
	relaunchPending bool
	graceTimer      *time.Timer
	lastTickBytes   uint64
	// sampler reads /proc for ticks, its memory reused from tick to tick;
	// noteDescendant records each descendant it finds.
	sampler        procfs.Sampler
	usageDegraded  bool // the process_usage degradation was recorded
	noteDescendant func(int)
	activity       string
	descendants    map[int]bool
	// d keeps the session's story coherent (internal/stream): every
	// moment is a fact stepped through it; it records what is ready, in
	// order, linked, and arms queueTimer for what waits.
	d *stream.Driver[SyncResult]
	// companion is the client running beside the session, or nil.
	companion *companion
	// turns is when the latest turn opened and one last ended (turns.go).
	turns turns
	// att is whether the session waits for a person (attention.go), and
	// notifier announces its episodes (attention_notify.go).
	att      attending
	notifier *notify.Notifier
	// hookPayloads wait for a hook that can place them.
	hookPayloads []contract.PayloadEnvelope
	// obs is the telemetry watcher's channel (replaced when a renewal
	// restarts the watcher); nil once closed.
	obs <-chan Moment
	// queueTimer wakes the loop at the keeper's next deadline.
	queueTimer *time.Timer
	// drain is set while telemetry still in flight is taken after a
	// harness exited (drain.go).
	drain *drainState
	// groupGone is the process group the drain saw without a live
	// member (0: none yet): nothing can join it again, so the session's
	// end does not look for leftovers in it once more.
	groupGone int
	// orch renews the session (built on first use); renewing is set while
	// a renewal runs beside the loop, whose requests arrive on calls and
	// whose end arrives on renewed.
	orch     *renewal.Orchestrator
	renewing *renewRun
	calls    chan func()
	renewed  chan renewResult
	loopDone chan struct{}
	// keyHold counts the renewals that held typed keys, keyReleased is
	// the last hold whose release was armed (keyhold.go).
	keyHold, keyReleased int
	// relaunchDied is the renewal whose relaunch exited before it was
	// ready: its next start is the fallback (relaunchready.go).
	relaunchDied *renewRun
	// processes counts the session.starting receipts that started (or
	// start) a harness process (processenv.go).
	processes int
	// continuation numbers this wrapper among those that continued the
	// session after a lost wrapper (seal.Continuation; 0: none was lost):
	// its session.* receipts carry it, a new incarnation.
	continuation int
	// done ends the loop; failedResult, when set, is the session's result
	// (a harness that could not be started after a recovery).
	done         bool
	failedResult *Result
}

// Run starts the harness under a PTY and supervises it until it exits.
// It always restores the terminal before returning.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.BindWait <= 0 {
		cfg.BindWait = DefaultBindWait
	}
	if cfg.OpenTerminal == nil {
		cfg.OpenTerminal = OpenPTY
	}
	if cfg.Notify.Enabled() && cfg.Notify.LogPath == "" {
		cfg.Notify.LogPath = filepath.Join(statedir.SessionDir(cfg.StateDir, cfg.Record.ID), notify.LogName)
	}
	s := &supervisor{
		cfg:          cfg,
		ctx:          ctx,
		log:          cfg.Log,
		rec:          cfg.Record,
		descendants:  map[int]bool{},
		hookPayloads: cfg.HookPayloads,
		calls:        make(chan func()),
		renewed:      make(chan renewResult, 1),
		loopDone:     make(chan struct{}),
		processes:    priorProcesses(cfg.Prior),
		notifier:     notify.New(cfg.Notify, cfg.Log),
	}
	if cfg.Recover {
		s.continuation = seal.Continuation(cfg.Prior)
	}
	s.queueTimer = time.NewTimer(time.Hour)
	s.queueTimer.Stop()
	defer s.queueTimer.Stop()
	s.d = newDriver(s)
	s.version = startVersionRead(ctx, cfg.Adapter, cfg.Spec, cfg.Facts, s.versionRead)
	defer func() { s.version.stop() }() // a relaunch reads it again (rereadVersion)
	defer func() { _ = s.sampler.Close() }()
	return s.run()
}

func (s *supervisor) run() (Result, error) {
	// The record is first written once the harness runs (or failed to
	// start): negotiation already happened in-process, so "pending" would
	// only cost a synchronous write on the start-up path.
	s.rec.State = statedir.StatePending

	sigs := s.cfg.signals
	if sigs == nil && s.cfg.HandleSignals {
		sigs = CatchSignals()
		defer sigs.Release()
	}

	// The control socket opens on another goroutine meanwhile (a socket,
	// bind, listen and chmod).
	ctrlCh := make(chan controlCall)
	ctl := s.openControl(ctrlCh)
	defer ctl.close()

	// A session continued after a wrapper crash records its
	// session.starting only if no interrupted renewal starts the harness
	// (the renewal records its own).
	if !s.cfg.Recover {
		if _, err := s.recordStarting(); err != nil {
			return Result{ExitCode: exitcode.LaunchFailed, State: statedir.StateFailed, LaunchErr: err}, nil
		}
	}

	term, err := s.cfg.OpenTerminal(s.cfg.Terminal)
	if err != nil {
		if s.cfg.Recover {
			_, _ = s.recordStarting()
		}
		res, _ := s.launchFailed(exitcode.LaunchFailed, "terminal_unavailable", fmt.Errorf("cannot open the terminal: %w", err))
		return res, nil
	}
	s.term = term
	defer func() { _ = term.Close() }() // restores the terminal on every path

	defer close(s.loopDone)
	s.obs = s.cfg.Observations
	// The signal policy and the control socket (the harness's hooks call
	// it) hold before any harness starts.
	sigCh := sigs.wait()
	ctl.ready()
	if s.cfg.Recover && s.cfg.Adapter != nil {
		// Finish a renewal the crashed wrapper left in progress: its
		// relaunch carries the pending payloads. The loop serves
		// meanwhile; the harness starts when it is done (renewals.done).
		r := renewals{s}
		if r.relaunchSealed() {
			_, _ = s.recordStarting()
		}
		r.start(r.orchestrator().Recover, nil)
	} else {
		if s.cfg.Recover {
			_, _ = s.recordStarting()
		}
		if res, failed := s.launch(); failed {
			return res, nil
		}
	}
	s.startCompanion()
	res := s.loop(sigCh, ctrlCh)
	s.notifier.Wait(time.Second) // the announcements of its last episodes
	s.companion.stop()           // after session.ended: it exits once it reads the end
	return res, nil
}

// recordStarting records the wrapper's session.starting.
func (s *supervisor) recordStarting() (contract.LifecycleReceipt, error) {
	res, _, err := s.d.Ask(stream.Fact{Kind: stream.Direct, Moment: Moment{
		Event:    contract.EventSessionStarting,
		Payloads: s.cfg.StartPayloads,
		Summary:  map[string]any{"argv0": s.cfg.Spec.Path, "cwd": s.rec.Cwd},
	}})
	return res.Receipt, err
}

// launch starts the first harness and records it (the running record and
// session.started). failed is true when it could not start; res is then
// the session's result.
func (s *supervisor) launch() (res Result, failed bool) {
	spec := s.cfg.Spec
	spec.Env = processEnv(s.cfg.ProcessEnv, s.processes, spec.Env)
	child, err := s.term.Start(spec)
	if err != nil {
		switch {
		case errors.Is(err, ptyio.ErrNotFound):
			return s.launchFailed(exitcode.NotFound, "command_not_found",
				fmt.Errorf("%s: command not found; check the name or PATH", s.cfg.Spec.Path))
		case errors.Is(err, ptyio.ErrNotExecutable):
			return s.launchFailed(exitcode.NotExecutable, "command_not_executable",
				fmt.Errorf("%s: not executable; check its permissions", s.cfg.Spec.Path))
		default:
			return s.launchFailed(exitcode.LaunchFailed, "start_failed", fmt.Errorf("cannot start %s: %w", s.cfg.Spec.Path, err))
		}
	}
	if s.cfg.PinnedSessionID != "" {
		s.d.Step(stream.Fact{Kind: stream.Bind, Moment: Moment{HarnessSessionID: s.cfg.PinnedSessionID}})
	}
	s.attach(child, s.cfg.Spec.Path)
	now := s.cfg.Now()
	s.d.Step(stream.Fact{Kind: stream.Started, Now: now, Moment: Moment{Event: contract.EventSessionStarted, Summary: map[string]any{"pid": child.Pid()}},
		PayloadsWaitHook: len(s.pendingFor(contract.EventSessionStarted)) > 0 && s.cfg.bridged()})
	logHeld(s.log, s.d, now)
	return Result{}, false
}

// controlOpening is the control socket being opened by openControl.
type controlOpening struct {
	s    *supervisor
	door *hookDoor
	done chan struct{}
	srv  *control.Server
	err  error
}

// openControl starts opening the control socket, whose calls reach the
// loop on ctrlCh; ready waits for it, close closes it.
func (s *supervisor) openControl(ctrlCh chan<- controlCall) *controlOpening {
	c := &controlOpening{s: s, door: s.cfg.hookDoor, done: make(chan struct{})}
	toLoop := func(ctx context.Context, req control.Request) (any, error) {
		call := controlCall{ctx: ctx, req: req, reply: make(chan controlReply, 1)}
		select {
		case ctrlCh <- call:
		case <-ctx.Done():
			return nil, errCallerGone(ctx)
		}
		select {
		case r := <-call.reply:
			return r.res, r.err
		case <-ctx.Done():
			return nil, errCallerGone(ctx)
		}
	}
	if c.door != nil {
		serve := hookServer(func(ctx context.Context, args hooks.HookArgs) ([]byte, error) {
			raw, err := json.Marshal(args)
			if err != nil {
				return nil, err
			}
			res, err := toLoop(ctx, control.Request{Op: control.OpHook, Args: raw})
			if err != nil {
				return nil, err
			}
			reply, _ := res.(hooks.HookReply)
			return []byte(reply.Response), nil
		})
		c.door.serve.Store(&serve)
	}
	if s.cfg.ControlSocket == "" {
		close(c.done)
		return c
	}
	go func() {
		defer close(c.done)
		c.srv, c.err = control.Listen(s.cfg.ControlSocket, toLoop, s.log)
	}()
	return c
}

// ready waits until the socket listens. A socket that cannot open is a
// degraded capability, never a failed session. It runs on the
// supervisor's goroutine.
func (c *controlOpening) ready() {
	<-c.done
	if c.err != nil {
		c.s.log.Warn("control socket unavailable", "err", c.err)
		c.s.warnDegraded("control_socket", c.err.Error())
	}
}

// close closes the socket once it is open (or failed to).
func (c *controlOpening) close() {
	if c.door != nil {
		c.door.serve.Store(nil) // calls after the loop ends are refused
	}
	<-c.done
	if c.srv != nil {
		c.srv.Close()
	}
}

// attach makes child the running harness (the first, or a renewal's).
func (s *supervisor) attach(child Process, argv0 string) {
	s.child = child
	s.startedAt = s.cfg.Now()
	s.lastTickBytes = 0
	s.rec.Pid = child.Pid()
	s.rec.PidStartTicks = 0
	if st, err := procfs.Stat(child.Pid()); err == nil {
		s.rec.PidStartTicks = st.StartTicks
	}
	if s.rec.StartedAt == nil { // the session's start, not a relaunch's
		t := s.startedAt
		s.rec.StartedAt = &t
	}
	if s.rec.State == statedir.StatePending {
		s.rec.State = statedir.StateRunning
	}
	s.saveRecord()
	s.log.Info("harness started", "pid", child.Pid(), "argv0", argv0)
}

// loop is the supervisor: the only goroutine that changes session state.
// Nothing it does waits on the harness, a client or a renewal.
func (s *supervisor) loop(sigCh <-chan os.Signal, ctrlCh <-chan controlCall) Result {
	// Interval ticks and activity checks share one timer, armed for
	// whichever is due first. With ticks off, announcements still need
	// the checks (an episode held while keys were typed goes out once
	// they stop): they run, and record nothing.
	var tickC <-chan time.Time
	var ticks *tickClock
	if s.cfg.Tick > 0 || s.notifier != nil {
		every := s.cfg.Tick
		if every <= 0 {
			every = ticksOff
		}
		ticks = newTickClock(every, min(s.cfg.IdleAfter/2, time.Second), time.Now())
		defer ticks.timer.Stop()
		tickC = ticks.timer.C
		s.activity = activityActive
		if a, _ := s.currentActivity(); a == activityUnmetered {
			s.activity = a
		}
	}
	var maxC <-chan time.Time
	if s.cfg.MaxDuration > 0 {
		mt := time.NewTimer(s.cfg.MaxDuration)
		defer mt.Stop()
		maxC = mt.C
	}
	ctxDone := s.ctx.Done()

	for !s.done {
		var childDone <-chan struct{}
		if s.child != nil && s.renewing == nil && s.drain == nil {
			childDone = s.child.Done() // a renewal may have replaced the child
		}
		var graceC <-chan time.Time
		if s.graceTimer != nil {
			graceC = s.graceTimer.C
		}
		var queueC <-chan time.Time
		if s.d.Waiting() {
			queueC = s.queueTimer.C
		}
		pollC, exitsC, syncedC, deadlineC := s.drain.channels()
		if s.cfg.passed != nil {
			s.cfg.passed()
		}
		select {
		case <-childDone:
			s.beginDrain(nil)
		case <-pollC:
			s.pollGroup(false)
		case <-exitsC:
			s.pollGroup(true)
		case <-syncedC:
			s.onSynced()
		case <-deadlineC:
			s.log.Warn("drain bound reached", "group_alive", s.drain.pgid != 0, "caught_up", s.drain.caughtUp)
			s.endDrain(true)
		case f := <-s.calls:
			f()
		case sf := <-s.cfg.attention.channel():
			s.attendSourced(sf)
		case r := <-s.renewed:
			renewals{s}.done(r)
		case <-s.companionExited():
			s.onCompanionExit()
		case sig := <-sigCh:
			s.onSignal(sig.(syscall.Signal))
		case call := <-ctrlCh:
			if call.ctx.Err() != nil {
				continue // the caller gave up before the loop took it
			}
			s.onControl(call)
		case <-tickC:
			switch ticks.fired(time.Now()) {
			case dueTick:
				s.attentionCheck()
				s.tick(tickInterval)
			case dueCheck:
				s.attentionCheck() // a dialog answered at the terminal, an announcement the typing held
				if a, _ := s.currentActivity(); s.cfg.Tick > 0 && s.child != nil && s.drain == nil && a != s.activity {
					s.tick(tickActivityChange)
				}
			}
		case <-graceC:
			s.log.Warn("grace period over; killing the process group")
			s.graceTimer = nil
			s.signalChild(syscall.SIGKILL)
		case <-maxC:
			s.stop(contract.StoppedByTimeout, syscall.SIGTERM)
		case m, ok := <-s.obs:
			if !ok {
				s.obs = nil
				if s.drain != nil && s.drain.pgid == 0 {
					s.drain.synced, s.drain.caughtUp = nil, true
					s.endDrain(false)
				}
				continue
			}
			s.observed(m)
		case <-queueC:
			s.d.Step(stream.Fact{Kind: stream.Due, Now: s.cfg.Now()})
			s.endDrain(false)
		case <-ctxDone:
			ctxDone = nil
			s.stop(contract.StoppedByAbort, syscall.SIGTERM)
		}
	}
	if s.failedResult != nil {
		return *s.failedResult
	}
	return s.finish()
}

// signalChild signals the running harness's group, if one runs.
func (s *supervisor) signalChild(sig syscall.Signal) {
	if s.child != nil {
		_ = s.child.SignalGroup(sig)
	}
}

// launchFailed records that the harness never started and returns the
// wrapper's exit code.
func (s *supervisor) launchFailed(code int, reason string, err error) (Result, bool) {
	s.log.Error("launch failed", "err", err)
	fc := contract.FailureAdapterUnavailable
	if code == exitcode.LaunchFailed {
		fc = contract.FailureInternalError
	}
	s.d.Step(stream.Fact{Kind: stream.Direct, Moment: Moment{
		Event:   contract.EventSessionEnded,
		Status:  contract.StatusFailed,
		Failure: &fc,
		Summary: map[string]any{"reason": reason, "exit_status": code},
	}})
	now := s.cfg.Now()
	s.rec.EndedAt = &now
	s.rec.State = statedir.StateFailed
	s.rec.Exit = &statedir.ExitInfo{Code: code, Outcome: string(contract.LifecycleFailure), Phase: string(contract.PhaseFailed), Reason: reason}
	s.saveRecord()
	return Result{ExitCode: code, State: statedir.StateFailed, LaunchErr: err}, true
}

// finish classifies the exit, cleans the process group, records
// session.ended and the final state.
func (s *supervisor) finish() Result {
	if s.graceTimer != nil {
		s.graceTimer.Stop()
	}
	if s.child == nil { // a recovery that could not start the harness
		return s.endWithoutHarness()
	}
	st := s.child.Wait()
	pid := s.child.Pid()
	// Anything still in the harness's group is killed; anything that left
	// the group (a detached daemon) is reported.
	if s.groupGone != pid && groupAlive(pid) {
		s.log.Warn("killing processes left in the harness group")
		_ = s.child.SignalGroup(syscall.SIGKILL)
	}
	var leftover []int
	for p := range s.descendants {
		if alive(p) {
			leftover = append(leftover, p)
		}
	}

	facts := contract.ExitFacts{Code: st.Code, Signaled: st.Signaled, Signal: int(st.Signal), StoppedBy: s.stoppedBy, FromWaitStatus: true}
	class := contract.ClassifyExit(facts)
	ended := s.cfg.Now()
	sum := contract.SessionEndedSummary(class, facts, s.startedAt, ended, s.rec.Cwd)
	sum["pid"] = pid
	if len(leftover) > 0 {
		sum["leftover_pids"] = leftover
	}
	ending := Moment{Event: contract.EventSessionEnded, Summary: sum, Warnings: s.undelivered()}
	if s.relaunchPending {
		// The session stopped (or the start failed) after a renewal told
		// its relaunch's session.starting and before the relaunch ran:
		// that harness session never started, a failed launch as far as
		// the stream can tell (the exit facts are the wrapper's end).
		fc := contract.FailureInternalError
		ending.Status, ending.Failure = contract.StatusFailed, &fc
		sum["relaunch"] = "not_started"
	}
	s.d.Step(stream.Fact{Kind: stream.Direct, Moment: ending})

	code := st.Code
	if st.Signaled {
		code = 128 + int(st.Signal)
	}
	state := finalState(class, s.aborting)
	s.rec.State = state
	s.rec.EndedAt = &ended
	info := &statedir.ExitInfo{Code: code, Outcome: string(class.Outcome), Phase: string(class.Phase), Reason: class.Reason}
	if st.Signaled {
		info.Signal = sigName(st.Signal)
	}
	s.rec.Exit = info
	s.saveRecord()
	s.log.Info("harness ended", "code", code, "phase", class.Phase, "reason", class.Reason)
	return Result{ExitCode: code, State: state, Class: class}
}

// endWithoutHarness ends a session whose harness never ran in this
// wrapper (a continued session whose recovery failed).
func (s *supervisor) endWithoutHarness() Result {
	res, _ := s.launchFailed(exitcode.LaunchFailed, "recovery_failed", errors.New("the interrupted renewal could not start the harness again; see `lifeloop renewal status` and the session log"))
	return res
}

// undelivered warns of hook payloads no hook could take.
func (s *supervisor) undelivered() []contract.Warning {
	var warnings []contract.Warning
	for _, p := range s.hookPayloads {
		warnings = append(warnings, contract.Warning{
			Code:    "payload_not_delivered",
			Message: fmt.Sprintf("payload %s was never placed: no hook that can take it fired", p.PayloadID),
		})
	}
	return warnings
}

func finalState(c contract.ExitClass, aborting bool) statedir.SessionState {
	switch {
	case aborting:
		return statedir.StateAborted
	case c.Phase == contract.PhaseCompleted:
		return statedir.StateCompleted
	case c.Phase == contract.PhaseStopped && c.Outcome == contract.LifecycleCancelled:
		return statedir.StateAborted
	default:
		return statedir.StateFailed
	}
}

func alive(pid int) bool {
	st, err := procfs.Stat(pid)
	return err == nil && st.State != 'Z'
}

func (s *supervisor) currentActivity() (string, float64) {
	if s.child == nil {
		return s.activity, 0
	}
	a := s.child.Activity()
	if !a.Metered {
		return activityUnmetered, 0
	}
	return activityOf(a.LastOutput, s.startedAt, s.cfg.Now(), s.cfg.IdleAfter)
}

// tick records a supervisor.tick receipt (none while no harness runs).
func (s *supervisor) tick(trigger string) { s.tickWith(trigger, nil) }

// tickWith records a supervisor.tick receipt carrying, while the
// session's attention is tracked, its block with closed, the episode the
// change it records ended (attention_stream.go).
func (s *supervisor) tickWith(trigger string, closed *attention.Episode) {
	if s.child == nil || s.drain != nil {
		return
	}
	pid := s.child.Pid()
	if s.noteDescendant == nil {
		s.noteDescendant = func(d int) { s.descendants[d] = true }
	}
	// One pass over the process table for the group and the descendants; a failed
	// read leaves the numbers at zero (a tick is evidence, never fatal).
	g, err := s.sampler.Sample(pid, pid, s.noteDescendant)
	if err == nil && !g.Usage && !s.usageDegraded {
		// Once a session: this platform reads no memory or CPU figures.
		s.usageDegraded = true
		s.warnDegraded("supervisor.process_usage", "this platform's process table (sysctl kern.proc) gives no memory or CPU time without libproc; ticks leave rss_bytes and cpu_seconds out")
	}
	act := s.child.Activity()
	activity, idle := s.currentActivity()
	sample := tickSample{
		Pid: pid, Alive: g.Alive, Processes: g.Procs, Usage: g.Usage, RSSBytes: g.RSSBytes, CPUSeconds: g.CPUSeconds,
		OutputBytes: act.BytesOut - s.lastTickBytes, IdleSeconds: idle, Activity: activity,
	}
	s.lastTickBytes = act.BytesOut
	s.activity = activity
	sum := sample.summary(trigger, s.tickState())
	s.attentionBlock(sum, closed)
	s.d.Step(stream.Fact{Kind: stream.Own, Moment: Moment{Event: contract.EventSupervisorTick, Summary: sum}})
}

// Tick states besides the session's own (statedir): the harness a tick
// describes is being stopped and started again by a renewal, or stopped
// for the session's end. Neither is `running`, which a consumer reads as
// the session going on (HCP: RUNNING).
const (
	tickRenewing = "renewing"
	tickStopping = "stopping"
)

// tickState is the state a tick reports: renewing while a renewal stops
// the harness and starts it again, stopping (or aborting) once the
// session is being stopped, else the session's state.
func (s *supervisor) tickState() string {
	switch {
	case s.renewing != nil:
		return tickRenewing
	case s.stopping && s.rec.State == statedir.StateRunning:
		return tickStopping
	}
	return string(s.rec.State)
}

func (s *supervisor) warnDegraded(capability, evidence string) {
	now := s.cfg.Now().Unix()
	rc := contract.RetryAfterReconfigure
	s.d.Step(stream.Fact{Kind: stream.Own, Moment: Moment{
		Event:  contract.EventCapabilityDegraded,
		Status: contract.StatusDegraded,
		Degradations: []contract.CapabilityDegradation{{
			Capability: capability, PreviousSupport: contract.SupportNative, CurrentSupport: contract.SupportUnavailable,
			ObservedAtEpochS: &now, Evidence: &evidence, RetryClass: &rc,
		}},
	}})
}

func (s *supervisor) saveRecord() {
	s.rec.UpdatedAt = s.cfg.Now()
	if err := statedir.WriteSession(s.cfg.StateDir, s.rec); err != nil {
		s.log.Error("writing session.json failed", "err", err)
	}
}

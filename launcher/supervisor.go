package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
	"golang.org/x/sys/unix"
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
	// Terminal is the user's side.
	Terminal ptyio.TerminalConfig
	// Tick is the supervisor.tick interval; 0 turns ticks off.
	Tick time.Duration
	// IdleAfter is how long without output makes the harness idle.
	IdleAfter time.Duration
	// Grace is how long a stopped harness gets before SIGKILL.
	Grace time.Duration
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
	// Files keeps payload text a relaunched harness reads from a file.
	Files *placementFiles
	// HookRecorder records hook moments that can place payloads, with
	// synchronous clients; nil records them like any other moment.
	HookRecorder SyncRecorder
	// Recover finishes a renewal a crashed wrapper left in progress before
	// starting the harness (run --continue-session).
	Recover bool
	// Adapter is the session's adapter and UserArgv the command line as
	// the user gave it; renewal relaunches with them. BridgeArgs are the
	// hook bridge's launch arguments, added again at a relaunch.
	Adapter    *adapters.Adapter
	UserArgv   []string
	BridgeArgs []string
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
	// ControlSocket is the control socket path; empty disables it.
	ControlSocket string
	// Log receives lifeloop's own messages (never the terminal).
	Log *slog.Logger
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
}

// Exit codes before launch (the wrapper convention).
const (
	ExitLaunchFailed  = 125
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

type controlCall struct {
	req   ControlRequest
	reply chan controlReply
}

type controlReply struct {
	res any
	err error
}

// supervisor is the state of one Run; only the loop goroutine touches it.
type supervisor struct {
	cfg   Config
	ctx   context.Context
	log   *slog.Logger
	rec   statedir.SessionRecord
	term  *ptyio.Terminal
	child *ptyio.Child

	startedAt       time.Time
	startedReceipt  string
	lastReceipt     string
	stopping        bool
	stoppedBy       string
	aborting        bool
	graceTimer      *time.Timer
	lastTickBytes   uint64
	activity        string
	descendants     map[int]bool
	harnessSessions map[string]bool
	// harnessSessionID is the latest harness session id observed; it is
	// set on every receipt once known.
	harnessSessionID string
	// frameReceipts maps a frame id to the receipt that opened it, so the
	// frame's later receipts chain to it.
	frameReceipts map[string]string
	// seenFrames remembers recorded frame moments (event + frame id) so a
	// moment reported by both a hook and the transcript is recorded once.
	seenFrames map[string]bool
	// hookPayloads wait for a hook that can place them.
	hookPayloads []contract.PayloadEnvelope
	// nativeFrames are the frame events the hook bridge reports; the
	// transcript's version of them waits in queue for the hook's
	// (nativewins.go).
	nativeFrames map[contract.Event]bool
	// obs is the telemetry watcher's channel (replaced when a renewal
	// restarts the watcher); nil once closed.
	obs        <-chan Moment
	queue      []queuedMoment
	queueTimer *time.Timer
	// orch renews the session (built on the first renew request).
	orch *renewal.Orchestrator
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
	s := &supervisor{
		cfg:             cfg,
		ctx:             ctx,
		log:             cfg.Log,
		rec:             cfg.Record,
		descendants:     map[int]bool{},
		harnessSessions: map[string]bool{},
		frameReceipts:   map[string]string{},
		seenFrames:      map[string]bool{},
		hookPayloads:    cfg.HookPayloads,
	}
	if len(cfg.BridgeArgs) > 0 && cfg.Adapter != nil {
		s.nativeFrames = bridgedFrameEvents(cfg.Adapter)
	}
	s.armQueue()
	defer s.queueTimer.Stop()
	return s.run()
}

func (s *supervisor) run() (Result, error) {
	// The record is first written once the harness runs (or failed to
	// start): negotiation already happened in-process, so "pending" would
	// only cost a synchronous write on the start-up path.
	s.rec.State = statedir.StatePending

	starting, err := s.record(Moment{
		Event:    contract.EventSessionStarting,
		Payloads: s.cfg.StartPayloads,
		Summary:  map[string]any{"argv0": s.cfg.Spec.Path, "cwd": s.rec.Cwd},
	})
	if err != nil {
		return Result{ExitCode: ExitLaunchFailed, State: statedir.StateFailed, LaunchErr: err}, nil
	}

	var sigCh chan os.Signal
	if s.cfg.HandleSignals {
		sigCh = make(chan os.Signal, 8)
		signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
		defer signal.Stop(sigCh)
	}

	term, err := ptyio.OpenTerminal(s.cfg.Terminal)
	if err != nil {
		return s.launchFailed(starting, ExitLaunchFailed, "terminal_unavailable", fmt.Errorf("cannot open the terminal: %w", err))
	}
	s.term = term
	defer func() { _ = term.Close() }() // restores the terminal on every path

	ctrlCh := make(chan controlCall)
	if s.cfg.ControlSocket != "" {
		srv, err := listenControl(s.cfg.ControlSocket, func(ctx context.Context, req ControlRequest) (any, error) {
			call := controlCall{req: req, reply: make(chan controlReply, 1)}
			select {
			case ctrlCh <- call:
			case <-ctx.Done():
				return nil, ErrNotLive
			}
			r := <-call.reply
			return r.res, r.err
		}, s.log)
		if err != nil {
			s.log.Warn("control socket unavailable", "err", err)
			s.warnDegraded("control_socket", err.Error())
		} else {
			defer srv.Close()
		}
	}

	// A session continued after a wrapper crash first finishes a renewal
	// it left in progress: the relaunch carries the pending payloads.
	recovered := false
	if s.cfg.Recover && s.cfg.Adapter != nil {
		s.startedReceipt = starting.ReceiptID
		out, rerr := s.renewer().Recover(s.ctx)
		switch {
		case rerr != nil:
			s.log.Warn("recovering the interrupted renewal failed", "err", rerr)
		case out.Started:
			recovered = true
			s.log.Info("interrupted renewal finished", "attempt", out.Attempt)
		}
	}
	child := s.child
	var err2 error
	if !recovered {
		child, err2 = term.Start(s.cfg.Spec)
	}
	if err := err2; err != nil {
		switch {
		case errors.Is(err, ptyio.ErrNotFound):
			return s.launchFailed(starting, ExitNotFound, "command_not_found",
				fmt.Errorf("%s: command not found; check the name or PATH", s.cfg.Spec.Path))
		case errors.Is(err, ptyio.ErrNotExecutable):
			return s.launchFailed(starting, ExitNotExecutable, "command_not_executable",
				fmt.Errorf("%s: not executable; check its permissions", s.cfg.Spec.Path))
		default:
			return s.launchFailed(starting, ExitLaunchFailed, "start_failed", fmt.Errorf("cannot start %s: %w", s.cfg.Spec.Path, err))
		}
	}
	s.child = child
	s.startedAt = s.cfg.Now()
	s.rec.Pid = child.Pid()
	t := s.startedAt
	s.rec.StartedAt = &t
	s.rec.State = statedir.StateRunning
	s.saveRecord()
	s.log.Info("harness started", "pid", child.Pid(), "argv0", s.cfg.Spec.Path)

	if !recovered { // a recovered renewal recorded its own session.started
		started, _ := s.record(Moment{
			Event:   contract.EventSessionStarted,
			Parent:  &starting.ReceiptID,
			Summary: map[string]any{"pid": child.Pid()},
		})
		s.startedReceipt = started.ReceiptID
	}

	var tickC <-chan time.Time
	var activityC <-chan time.Time
	if s.cfg.Tick > 0 {
		tk := time.NewTicker(s.cfg.Tick)
		defer tk.Stop()
		tickC = tk.C
		check := min(s.cfg.IdleAfter/2, time.Second)
		if check <= 0 {
			check = time.Second
		}
		at := time.NewTicker(check)
		defer at.Stop()
		activityC = at.C
		s.activity = activityActive
	}
	var maxC <-chan time.Time
	if s.cfg.MaxDuration > 0 {
		mt := time.NewTimer(s.cfg.MaxDuration)
		defer mt.Stop()
		maxC = mt.C
	}
	s.obs = s.cfg.Observations
	ctxDone := s.ctx.Done()

	for {
		var graceC <-chan time.Time
		if s.graceTimer != nil {
			graceC = s.graceTimer.C
		}
		var queueC <-chan time.Time
		if len(s.queue) > 0 {
			queueC = s.queueTimer.C
		}
		select {
		case <-s.child.Done(): // a renewal may have replaced the child
			s.drainObservations(s.obs, ctrlCh)
			return s.finish(), nil
		case sig := <-sigCh:
			s.onSignal(sig.(syscall.Signal))
		case call := <-ctrlCh:
			res, err := s.onControl(call.req)
			call.reply <- controlReply{res, err}
		case <-tickC:
			s.tick(tickInterval)
		case <-activityC:
			if a, _ := s.currentActivity(); a != s.activity {
				s.tick(tickActivityChange)
			}
		case <-graceC:
			s.log.Warn("grace period over; killing the process group")
			s.graceTimer = nil
			_ = s.child.SignalGroup(syscall.SIGKILL)
		case <-maxC:
			s.stop(contract.StoppedByTimeout, syscall.SIGTERM)
		case m, ok := <-s.obs:
			if !ok {
				s.obs = nil
				continue
			}
			s.enqueueTelemetry(m)
		case <-queueC:
			s.releaseQueue(s.cfg.Now())
		case <-ctxDone:
			ctxDone = nil
			s.stop(contract.StoppedByAbort, syscall.SIGTERM)
		}
	}
}

// launchFailed records that the harness never started and returns the
// wrapper's exit code.
func (s *supervisor) launchFailed(starting contract.LifecycleReceipt, code int, reason string, err error) (Result, error) {
	s.log.Error("launch failed", "err", err)
	fc := contract.FailureAdapterUnavailable
	if code == ExitLaunchFailed {
		fc = contract.FailureInternalError
	}
	_, _ = s.record(Moment{
		Event:   contract.EventSessionEnded,
		Status:  contract.StatusFailed,
		Failure: &fc,
		Parent:  &starting.ReceiptID,
		Summary: map[string]any{"reason": reason, "exit_status": code},
	})
	now := s.cfg.Now()
	s.rec.EndedAt = &now
	s.rec.State = statedir.StateFailed
	s.rec.Exit = &statedir.ExitInfo{Code: code, Outcome: string(contract.LifecycleFailure), Phase: string(contract.PhaseFailed), Reason: reason}
	s.saveRecord()
	return Result{ExitCode: code, State: statedir.StateFailed, LaunchErr: err}, nil
}

// stop delivers a stop lifeloop decided on: session.ending, the signal to
// the group, and the grace timer. A second stop escalates to SIGKILL.
func (s *supervisor) stop(reason string, sig syscall.Signal) {
	if s.stopping {
		s.log.Warn("second stop; killing the process group", "reason", reason)
		_ = s.child.SignalGroup(syscall.SIGKILL)
		return
	}
	s.stopping = true
	s.stoppedBy = reason
	if reason == contract.StoppedByAbort {
		s.aborting = true
		s.rec.State = statedir.StateAborting
		s.saveRecord()
	}
	_, _ = s.record(Moment{
		Event:   contract.EventSessionEnding,
		Parent:  &s.startedReceipt,
		Summary: map[string]any{"reason": reason, "signal": sigName(sig)},
	})
	if s.rec.State == statedir.StatePaused {
		_ = s.child.SignalGroup(syscall.SIGCONT)
	}
	_ = s.child.SignalGroup(sig)
	s.graceTimer = time.NewTimer(s.cfg.Grace)
}

func (s *supervisor) onSignal(sig syscall.Signal) {
	s.log.Info("signal received", "signal", sigName(sig))
	switch sig {
	case syscall.SIGINT, syscall.SIGTERM:
		if s.stopping {
			s.stop(sigReason(sig), sig) // escalates
			return
		}
		s.stop(sigReason(sig), sig)
	case syscall.SIGHUP, syscall.SIGQUIT:
		if !s.stopping {
			s.stop(sigReason(sig), sig)
			return
		}
		_ = s.child.SignalGroup(sig)
	default:
		_ = s.child.SignalGroup(sig)
	}
}

func sigReason(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return contract.StoppedBySIGINT
	case syscall.SIGTERM:
		return contract.StoppedBySIGTERM
	case syscall.SIGHUP:
		return "sighup"
	case syscall.SIGQUIT:
		return "sigquit"
	}
	return fmt.Sprintf("signal_%d", int(sig))
}

func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGUSR2:
		return "SIGUSR2"
	case syscall.SIGSTOP:
		return "SIGSTOP"
	case syscall.SIGCONT:
		return "SIGCONT"
	}
	return fmt.Sprintf("SIG%d", int(sig))
}

// finish classifies the exit, cleans the process group, records
// session.ended and the final state.
func (s *supervisor) finish() Result {
	st := s.child.Wait()
	if s.graceTimer != nil {
		s.graceTimer.Stop()
	}
	pid := s.child.Pid()
	// Anything still in the harness's group is killed; anything that left
	// the group (a detached daemon) is reported.
	if unix.Kill(-pid, 0) == nil {
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
	var warnings []contract.Warning
	for _, p := range s.hookPayloads {
		warnings = append(warnings, contract.Warning{
			Code:    "payload_not_delivered",
			Message: fmt.Sprintf("payload %s was never placed: no hook that can take it fired", p.PayloadID),
		})
	}
	parent := s.startedReceipt
	if s.lastReceipt != "" && s.stopping {
		parent = s.lastReceipt
	}
	_, _ = s.record(Moment{Event: contract.EventSessionEnded, Parent: &parent, Summary: sum, Warnings: warnings})

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
	a := s.child.Activity()
	return activityOf(a.LastOutput, s.startedAt, s.cfg.Now(), s.cfg.IdleAfter)
}

// tick records a supervisor.tick receipt.
func (s *supervisor) tick(trigger string) {
	pid := s.child.Pid()
	aliveNow, procs, rss, cpu := sampleGroup(pid)
	if ds, err := procfs.Descendants(pid); err == nil {
		for _, d := range ds {
			s.descendants[d] = true
		}
	}
	act := s.child.Activity()
	activity, idle := s.currentActivity()
	sample := tickSample{
		Pid: pid, Alive: aliveNow, Processes: procs, RSSBytes: rss, CPUSeconds: cpu,
		OutputBytes: act.BytesOut - s.lastTickBytes, IdleSeconds: idle, Activity: activity,
	}
	s.lastTickBytes = act.BytesOut
	s.activity = activity
	_, _ = s.record(Moment{
		Event:   contract.EventSupervisorTick,
		Parent:  &s.startedReceipt,
		Summary: sample.summary(trigger, string(s.rec.State)),
	})
}

// observe records a moment observed outside the process (telemetry). A
// new harness session id is remembered in session.json and set on every
// later receipt; frame receipts chain to the receipt that opened their
// frame, session-level ones to session.started; a frame moment a hook
// already reported is not recorded again.
func (s *supervisor) observe(m Moment) {
	if m.HarnessSessionID != "" {
		s.noteHarnessSession(m.HarnessSessionID)
	}
	if s.isDuplicate(m) {
		return
	}
	if m.Parent == nil {
		m.Parent = s.parentFor(m)
	}
	r, err := s.record(m)
	if err == nil {
		s.rememberFrame(m, r.ReceiptID)
	}
}

func (s *supervisor) noteHarnessSession(id string) {
	s.harnessSessionID = id
	if !s.harnessSessions[id] {
		s.harnessSessions[id] = true
		s.rec.HarnessSessionIDs = append(s.rec.HarnessSessionIDs, id)
		s.saveRecord()
	}
}

// parentFor is the receipt a moment chains to: its frame's opening, its
// parent frame's opening, else session.started.
func (s *supervisor) parentFor(m Moment) *string {
	if m.Frame != nil {
		if id, ok := s.frameReceipts[m.Frame.FrameID]; ok {
			return &id
		}
		if m.Frame.ParentFrameID != nil {
			if id, ok := s.frameReceipts[*m.Frame.ParentFrameID]; ok {
				return &id
			}
		}
	}
	p := s.startedReceipt
	return &p
}

func (s *supervisor) rememberFrame(m Moment, receiptID string) {
	if m.Frame != nil && m.Event == contract.EventFrameOpening {
		s.frameReceipts[m.Frame.FrameID] = receiptID
	}
}

func (s *supervisor) warnDegraded(capability, evidence string) {
	now := s.cfg.Now().Unix()
	rc := contract.RetryAfterReconfigure
	_, _ = s.record(Moment{
		Event:  contract.EventCapabilityDegraded,
		Status: contract.StatusDegraded,
		Parent: &s.startedReceipt,
		Degradations: []contract.CapabilityDegradation{{
			Capability: capability, PreviousSupport: contract.SupportNative, CurrentSupport: contract.SupportUnavailable,
			ObservedAtEpochS: &now, Evidence: &evidence, RetryClass: &rc,
		}},
	})
}

func (s *supervisor) record(m Moment) (contract.LifecycleReceipt, error) {
	if m.HarnessSessionID == "" {
		m.HarnessSessionID = s.harnessSessionID
	}
	r, err := s.cfg.Recorder.Record(s.ctx, m)
	if err != nil {
		s.log.Error("recording receipt failed", "event", m.Event, "err", err)
		return r, err
	}
	s.lastReceipt = r.ReceiptID
	return r, nil
}

func (s *supervisor) saveRecord() {
	s.rec.UpdatedAt = s.cfg.Now()
	if err := statedir.WriteSession(s.cfg.StateDir, s.rec); err != nil {
		s.log.Error("writing session.json failed", "err", err)
	}
}

// Status is what `lifeloop status` reports about a live session.
type Status struct {
	Session     statedir.SessionRecord `json:"session"`
	Alive       bool                   `json:"alive"`
	Processes   int                    `json:"processes"`
	RSSBytes    uint64                 `json:"rss_bytes"`
	CPUSeconds  float64                `json:"cpu_seconds"`
	OutputBytes uint64                 `json:"output_bytes"`
	IdleSeconds float64                `json:"idle_seconds"`
	Activity    string                 `json:"activity"`
	Stopping    bool                   `json:"stopping"`
}

// EmitArgs are the arguments of the emit control operation.
type EmitArgs struct {
	Event           contract.Event             `json:"event"`
	FrameID         string                     `json:"frame_id,omitempty"`
	ParentFrameID   string                     `json:"parent_frame_id,omitempty"`
	Payloads        []contract.PayloadEnvelope `json:"payloads,omitempty"`
	IdempotencyKey  string                     `json:"idempotency_key,omitempty"`
	TelemetryDetail map[string]any             `json:"telemetry_summary,omitempty"`
}

func (s *supervisor) onControl(req ControlRequest) (any, error) {
	switch req.Op {
	case OpStatus:
		pid := s.child.Pid()
		aliveNow, procs, rss, cpu := sampleGroup(pid)
		activity, idle := s.currentActivity()
		return Status{
			Session: s.rec, Alive: aliveNow, Processes: procs, RSSBytes: rss, CPUSeconds: roundMillis(cpu),
			OutputBytes: s.child.Activity().BytesOut, IdleSeconds: roundMillis(idle), Activity: activity, Stopping: s.stopping,
		}, nil
	case OpAbort:
		if s.stopping && s.aborting {
			return map[string]any{"state": s.rec.State, "note": "abort already in progress"}, nil
		}
		s.stop(contract.StoppedByAbort, syscall.SIGTERM)
		return map[string]any{"state": s.rec.State}, nil
	case OpPause:
		if s.rec.State != statedir.StateRunning {
			return nil, fmt.Errorf("cannot pause a session that is %s", s.rec.State)
		}
		if err := s.child.SignalGroup(syscall.SIGSTOP); err != nil {
			return nil, err
		}
		s.rec.State = statedir.StatePaused
		s.saveRecord()
		s.tick(tickStateChange)
		return map[string]any{"state": s.rec.State}, nil
	case OpResume:
		if s.rec.State != statedir.StatePaused {
			return nil, fmt.Errorf("cannot resume a session that is %s", s.rec.State)
		}
		if err := s.child.SignalGroup(syscall.SIGCONT); err != nil {
			return nil, err
		}
		s.rec.State = statedir.StateRunning
		s.saveRecord()
		s.tick(tickStateChange)
		return map[string]any{"state": s.rec.State}, nil
	case OpHook:
		return s.onHook(req.Args)
	case OpRenew:
		return s.onRenew(req.Args)
	case OpEmit:
		var a EmitArgs
		if err := json.Unmarshal(req.Args, &a); err != nil {
			return nil, fmt.Errorf("emit: bad arguments: %w", err)
		}
		m := Moment{Event: a.Event, Payloads: a.Payloads, Summary: a.TelemetryDetail, Parent: &s.startedReceipt}
		if a.IdempotencyKey != "" {
			k := a.IdempotencyKey
			m.IdempotencyKey = &k
		}
		if a.FrameID != "" {
			fc := contract.FrameContext{FrameID: a.FrameID, FrameClass: contract.FrameTopLevel}
			if a.ParentFrameID != "" {
				p := a.ParentFrameID
				fc.ParentFrameID = &p
				fc.FrameClass = contract.FrameSubcall
			}
			m.Frame = &fc
		}
		return s.cfg.Recorder.Record(s.ctx, m)
	default:
		return nil, fmt.Errorf("unknown control operation %q", req.Op)
	}
}

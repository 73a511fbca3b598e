package launcher

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/stream"
)

// DefaultBindWait bounds how long session.started waits for the harness
// to name its session (a SessionStart hook, the transcript's first line)
// before it is recorded with what is known. Nothing the person does waits
// for it (typed keys go to a relaunched harness once it takes them), so
// it is sized for a slow start: a TUI relaunched on two busy cores
// fired its SessionStart hook more than 5 s after its start.
const DefaultBindWait = 10 * time.Second

// HookFailedWarning marks the receipt `lifeloop host-hook` records when a
// hook call could not reach its wrapper.
const HookFailedWarning = stream.HookFailedWarning

// The rules of the story live in internal/stream; the supervisor does
// the I/O around its one driver (stream.Driver): every moment it
// records is a fact stepped through the driver (s.d.Step) — its own
// (stream.Own, Direct, After, Stop, Renewal, Started), a transcript's
// (observed), a hook's (stream.Hook, Placing, HookCall) — and the time
// passing (stream.Due) when the queue timer the driver arms fires. The
// driver records what the keeper makes ready through record, saves a
// new harness session id in session.json, and arms the timer.

// newDriver returns the driver of supervisor s's session.
func newDriver(s *supervisor) *stream.Driver[SyncResult] {
	cfg := s.cfg
	kc := stream.Config{Mode: contract.ModeLauncherWrapper, Transcript: cfg.Telemetry != nil, BindWait: cfg.BindWait,
		Known: cfg.Record.HarnessSessionIDs, Prior: cfg.Prior}
	if cfg.Adapter != nil {
		kc.Manifest = cfg.Adapter.Manifest()
		if cfg.bridged() {
			spec, frames := cfg.BridgeHooks, cfg.BridgeFrames
			if b := cfg.Adapter.HookBridge(); spec == nil && b != nil {
				spec, frames = b.Hooks(), b.BridgedFrameEvents()
			}
			kc.Bridged = map[contract.Event]bool{}
			for _, e := range frames {
				kc.Bridged[e] = true
			}
			kc.HookNamesSession = spec != nil && slices.ContainsFunc(spec.Hooks, func(h hooks.Hook) bool { return h.Role == hooks.RoleSessionStart })
		}
	}
	return stream.NewDriver(kc, s.record, stream.Callbacks{
		Bound: func(id string) {
			s.rec.HarnessSessionIDs = append(s.rec.HarnessSessionIDs, id)
			s.saveRecord()
		},
		Arm: func(at time.Time, ok bool) {
			s.queueTimer.Stop()
			if !ok {
				return
			}
			d := at.Sub(s.cfg.Now())
			if at.IsZero() || d < 0 {
				d = 0
			}
			s.queueTimer.Reset(d)
		},
	})
}

// bridged reports whether `run` installed the hook bridge (arguments,
// environment or both).
func (c Config) bridged() bool { return len(c.BridgeArgs) > 0 || len(c.BridgeEnv) > 0 }

// bridgePlaces reports whether the hook bridge has a hook that can place
// payloads at event: a prompt submission's for frame.opening, a session
// start's for session.started (the default, also when event is unset).
func bridgePlaces(ad *adapters.Adapter, event contract.Event) bool {
	role := hooks.RoleSessionStart
	if event == contract.EventFrameOpening {
		role = hooks.RolePromptSubmit
	}
	spec := ad.Hooks()
	return spec != nil && slices.ContainsFunc(spec.Hooks, func(h hooks.Hook) bool { return h.Role == role && spec.CanInject(h.Name) })
}

// observed steps a transcript moment (the watcher's): its harness
// session id is known at once, even while m waits.
func (s *supervisor) observed(m Moment) {
	s.d.Step(stream.Fact{Kind: stream.Transcript, Moment: m, Now: s.cfg.Now(), TranscriptOpen: s.obs != nil})
}

// record records one moment the driver made ready through the Recorder
// (sync: the HookRecorder, whose clients answer now), with the harness
// version on session.started and the continuation's number on session.*
// receipts.
func (s *supervisor) record(m Moment, sync bool) (SyncResult, string, error) {
	m = s.usageOnReceipt(s.attentionOnReceipt(withContinuation(s.continuation, s.version.stamp(m))))
	var res SyncResult
	var err error
	if sync && s.cfg.HookRecorder != nil {
		res, err = s.cfg.HookRecorder.RecordSync(s.ctx, m)
	} else {
		res.Receipt, err = s.cfg.Recorder.Record(s.ctx, m)
	}
	if err != nil {
		s.log.Error("recording receipt failed", "event", m.Event, "err", err)
		return res, "", err
	}
	res.payloads = m.Payloads
	newTurn := m.Frame != nil && m.Frame.FrameID != s.turns.openedID
	s.turns.recorded(m, s.cfg.Now())
	s.attendRecorded(m, newTurn, s.cfg.Now())
	if startsProcess(m.Event, m.Summary) {
		s.processes++
	}
	if m.Event == contract.EventSessionStarted {
		if w, ok := s.version.unproven(s.cfg.Now()); ok {
			s.d.Step(stream.Fact{Kind: stream.Own, Moment: w}) // recorded right after this receipt
		}
	}
	return res, res.Receipt.ReceiptID, nil
}

// withContinuation marks a session.* moment recorded by a wrapper that
// continued a session after a lost wrapper with the continuation's
// number n (contract.SummaryContinuation; 0: none): its start and end
// are a new incarnation, with OrgLoop keys of their own.
func withContinuation(n int, m Moment) Moment {
	if n == 0 || !strings.HasPrefix(string(m.Event), "session.") {
		return m
	}
	m.Summary = maps.Clone(m.Summary)
	if m.Summary == nil {
		m.Summary = map[string]any{}
	}
	m.Summary[contract.SummaryContinuation] = n
	return m
}

// logHeld logs why session.started is held and for how long at most.
func logHeld(log *slog.Logger, d *stream.Driver[SyncResult], now time.Time) {
	if h, ok := d.HeldStarted(); ok {
		log.Info("session.started held", "reason", h.Reason, "at_most", h.Until.Sub(now).Round(time.Millisecond))
	}
}

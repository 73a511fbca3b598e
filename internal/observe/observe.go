// Package observe follows a harness's telemetry — its transcript or
// session files, through the harness's telemetry.Source — and turns what
// it observes into lifecycle moments: the harness session binding,
// frames, context pressure, compaction, and the capability's loss and
// recovery. `lifeloop run` and `lifeloop watch` both use it.
package observe

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/telemetry"
)

// DefaultNotFoundAfter bounds how long the watcher looks for the harness's
// telemetry file before it reports the capability as degraded.
const DefaultNotFoundAfter = 30 * time.Second

// ClaimsFolder is the folder under the state root that holds the telemetry
// claims of every lifeloop process (see Options.Claims).
const ClaimsFolder = "telemetry-claims"

// Options configure the telemetry watcher of one session.
//
// Which file belongs to which session: a file named by Path is followed as
// is. Otherwise the harness's discoverer lists the session files of Cwd
// born at or after LaunchedAt (minus two seconds of slack). When SessionID
// is known only that session's file matches — exact. Otherwise concurrent
// sessions in one folder are kept apart by Claims: every lifeloop process
// claims the file it follows in <state>/telemetry-claims/ (a claim of a
// dead process is stale), and each watcher takes the oldest file nobody
// holds. That is exact when launches are further apart than the time the
// harness takes to create its file, which is why `lifeloop run` pins the
// session id (adapters.SessionPinner) when the harness lets a launch
// choose it and the command line does not.
type Options struct {
	// Harness reads the harness's session files.
	Harness adapters.Telemetry
	// Env is the HARNESS's environment: the harness reads where its files
	// live and its own settings from it.
	Env []string
	// Cwd is the harness's working folder.
	Cwd string
	// LaunchedAt is when the harness was started (files born before it,
	// minus slack, belong to other launches).
	LaunchedAt time.Time
	// SessionID is the harness session id when the launch fixed it.
	SessionID string
	// Path, when set, is the file to follow (no discovery); FromStart reads
	// it from the beginning instead of its current end.
	Path      string
	FromStart bool
	// Follow switches to a newer matching file (a renewed or resumed
	// harness writes a new one).
	Follow bool
	// HistoryBefore, when set, marks lines whose own timestamp is older as
	// history: a continued conversation (a resumed session, a watched
	// file) is read from its start to learn the session id and the
	// pressure level, but its old turns are not reported again.
	HistoryBefore time.Time
	// HistoryOffset, when positive, marks the lines of Path that start
	// before this byte offset as history too (the file's size when
	// watching began).
	HistoryOffset int64
	// Levels are the pressure thresholds (default telemetry.DefaultLevels).
	Levels telemetry.Levels
	// ReportFirstPressure reports the first pressure reading even when
	// low (telemetry.WatchConfig.ReportFirstPressure).
	ReportFirstPressure bool
	// NotFoundAfter bounds discovery before capability.degraded (default
	// DefaultNotFoundAfter).
	NotFoundAfter time.Duration
	// Claims keep concurrent sessions off each other's files; nil claims
	// nothing.
	Claims telemetry.Claims
	// Tail tunes the tailer (poll intervals, MaxLine, ForcePoll).
	Tail telemetry.TailConfig
	// OnObservation, when set, is called (from the watcher goroutine) for
	// every observation, including those that make no receipt.
	OnObservation func()
	// Now is the clock (default time.Now); Log receives diagnostics.
	Now func() time.Time
	Log *slog.Logger
}

// Watcher is a running watcher: its moments and how to wait for its
// goroutine.
type Watcher struct {
	moments <-chan moment.Moment
	done    chan struct{}
	syncs   chan func()
}

// Moments are the moments the watcher observes, in order.
func (w *Watcher) Moments() <-chan moment.Moment { return w.moments }

// Wait blocks until the watcher's goroutine has exited (after its context
// was cancelled).
func (w *Watcher) Wait() { <-w.done }

// Sync asks the watcher to catch up with what the harness has written so
// far, without waiting for a file event or a poll. The channel is closed
// once every moment read by then is on Moments (buffered, or taken), or
// once the watcher has stopped. It never blocks the caller.
func (w *Watcher) Sync() <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		answered := make(chan struct{})
		select {
		case w.syncs <- func() { close(answered) }:
			select {
			case <-answered:
			case <-w.done:
			}
		case <-w.done:
		}
	}()
	return out
}

// Start starts watching the harness's telemetry and returns the
// moments it observes. The channel is closed when ctx is cancelled (or the
// watcher fails to start; the reason is then the last moment, a
// capability.degraded). One goroutine: it runs telemetry.Watch and exits
// with ctx; a send blocks until the receiver takes the moment or ctx ends.
func Start(ctx context.Context, o Options) (*Watcher, error) {
	cfg, kind, err := Config(o)
	if err != nil {
		return nil, err
	}
	ch := make(chan moment.Moment, 64)
	w := &Watcher{moments: ch, done: make(chan struct{}), syncs: make(chan func())}
	cfg.Syncs = w.syncs
	conv := newConverter(o, kind)
	go func() {
		defer close(w.done)
		defer close(ch)
		send := func(m moment.Moment) bool {
			select {
			case ch <- m:
				return true
			case <-ctx.Done():
				return false
			}
		}
		err := telemetry.Watch(ctx, cfg, func(ob telemetry.Observation) {
			if o.OnObservation != nil {
				o.OnObservation()
			}
			for _, m := range conv.convert(ob) {
				if !send(m) {
					return
				}
			}
		})
		if err != nil && ctx.Err() == nil {
			send(conv.failed(err))
		}
	}()
	return w, nil
}

// Unavailable returns a closed channel holding one moment: the
// capability.degraded that says why the watcher could not start (so the
// launch goes on without it and the ledger says so).
func Unavailable(o Options, err error) <-chan moment.Moment {
	ch := make(chan moment.Moment, 1)
	_, kind, _ := Config(o)
	ch <- newConverter(o, kind).failed(err)
	close(ch)
	return ch
}

// Config builds the telemetry.WatchConfig of o from the harness's
// telemetry source, and names the kind of file it reads.
func Config(o Options) (telemetry.WatchConfig, telemetry.SourceKind, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg := telemetry.WatchConfig{
		Path:   o.Path,
		Claims: o.Claims,
		Within: o.NotFoundAfter,
		Follow: o.Follow,
		Levels: o.Levels,
		Tail:   o.Tail,

		ReportFirstPressure: o.ReportFirstPressure,
	}
	if cfg.Within <= 0 {
		cfg.Within = DefaultNotFoundAfter
	}
	if cfg.Levels == (telemetry.Levels{}) {
		cfg.Levels = telemetry.DefaultLevels
	}
	if err := cfg.Levels.Validate(); err != nil {
		return cfg, telemetry.SourceTranscript, fmt.Errorf("pressure levels: %w", err)
	}
	cfg.Tail.FromStart = o.FromStart
	src, err := o.Harness.TelemetrySource(adapters.TelemetryTarget{
		Env: o.Env, Cwd: o.Cwd, LaunchedAt: o.LaunchedAt, SessionID: o.SessionID, Now: o.Now,
	})
	kind := src.Kind
	if kind == "" {
		kind = telemetry.SourceTranscript
	}
	if err != nil {
		return cfg, kind, err
	}
	cfg.Discoverer, cfg.NewParser = src.Discoverer, src.NewParser
	return cfg, kind, nil
}

// Capabilities the watcher reports on in capability.degraded.
const (
	capTelemetry       = "telemetry"
	capContextPressure = "context_pressure"
)

// converter turns observations into moments; only the watcher goroutine
// uses it.
//
// Receipts (every telemetry_summary carries provenance: source = the
// harness's kind of file, path, line, offset — never prompt text or model
// output):
//
//   - The first time a harness session id is seen, and whenever it
//     changes: session.started with telemetry_summary.binding =
//     "harness_session_id" (the binding receipt); the id then rides on
//     every receipt.
//   - A user prompt: frame.opening; the harness starts answering:
//     frame.opened; the turn completes: frame.ending then frame.ended
//     (telemetry_summary.stop_reason). frame_context.frame_id is the
//     harness's turn id; side conversations are subcall frames whose
//     parent is the open turn.
//   - A pressure level change or a compaction reset:
//     context.pressure_observed (tokens, window, percent, level,
//     previous_level, frame_id of the turn). A compaction: context.compacted (trigger,
//     pre_tokens, post_tokens; event id "<id>/context.compacted" when
//     the records identify it), followed by the reset.
//   - The file is not found within NotFoundAfter, is deleted, or cannot
//     be read: capability.degraded (status degraded) for telemetry and
//     context_pressure, synthesized → unavailable (partial for read
//     errors), retry_after_reread. When it is back: capability.degraded
//     with status observed and current_support synthesized again, and
//     telemetry_summary.recovered = true (the recovery receipt).
//   - Lines older than the session (HistoryBefore, HistoryOffset) give
//     the binding and feed the pressure level, and nothing else.
//   - Unparsable and over-long lines, truncation and replacement become
//     warnings on the next receipt.
//   - A line the parser expects to understand that no longer has the
//     shape it reads (telemetry.ObsUnreadable: harness drift, e.g. a
//     model reply whose usage cannot be read): one capability.degraded
//     for context_pressure, synthesized → partial, retry_after_reconfigure,
//     per watcher (never one per line), naming the harness version the
//     file records and what could not be read (telemetry_summary.reason
//     "harness_drift", harness_version, unreadable). Record kinds the
//     parser does not know stay silent.
type converter struct {
	kind     telemetry.SourceKind
	before   time.Time
	upTo     int64
	upToPath string
	now      func() time.Time
	log      *slog.Logger
	path     string
	harness  string
	degraded bool
	lostWhy  string
	warnings []contract.Warning
	// drifted: the one capability.degraded for lines the parser no
	// longer understands was recorded (ObsUnreadable).
	drifted bool
}

func newConverter(o Options, kind telemetry.SourceKind) *converter {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &converter{kind: kind, now: now, log: log, before: o.HistoryBefore, upTo: o.HistoryOffset, upToPath: o.Path}
}

func provenance(ob telemetry.Observation) map[string]any {
	s := map[string]any{"source": string(ob.Source.Kind)}
	if ob.Source.Path != "" {
		s["path"] = ob.Source.Path
	}
	if ob.Source.Line > 0 {
		s["line"] = ob.Source.Line
		s["offset"] = ob.Source.Offset
	}
	return s
}

func frameOf(ob telemetry.Observation) *contract.FrameContext {
	if ob.FrameID == "" {
		return nil
	}
	fc := &contract.FrameContext{FrameID: ob.FrameID, FrameClass: contract.FrameTopLevel}
	if ob.ParentFrameID != "" {
		p := ob.ParentFrameID
		fc.ParentFrameID = &p
		fc.FrameClass = contract.FrameSubcall
	}
	return fc
}

// history reports whether ob comes from a line written before this
// session began watching.
func (c *converter) history(ob telemetry.Observation) bool {
	if !c.before.IsZero() && !ob.At.IsZero() && ob.At.Before(c.before) {
		return true
	}
	return c.upTo > 0 && ob.Source.Path == c.upToPath && ob.Source.Line > 0 && ob.Source.Offset < c.upTo
}

// convert returns the moments of one observation (often none).
func (c *converter) convert(ob telemetry.Observation) []moment.Moment {
	if c.history(ob) && ob.Kind != telemetry.ObsHarnessSession {
		return nil
	}
	c.noteEvidence(ob)
	if ob.Source.Kind == "" {
		ob.Source.Kind = c.sourceKind()
	}
	if ob.Source.Path == "" {
		ob.Source.Path = c.path
	}
	var out []moment.Moment
	switch ob.Kind {
	case telemetry.ObsSourceFound, telemetry.ObsSourceAppeared:
		if ob.Kind == telemetry.ObsSourceFound && c.path != "" && ob.Source.Path != c.path {
			c.log.Info("telemetry: following a newer file", "path", ob.Source.Path)
		}
		c.path = ob.Source.Path
		if c.degraded {
			out = append(out, c.recovered(ob))
		}
	case telemetry.ObsSourceNotFound:
		if !c.degraded {
			out = append(out, c.lost(ob, contract.SupportUnavailable,
				fmt.Sprintf("no %s file appeared for this launch within the discovery bound; lifeloop keeps looking", c.sourceKind())))
		}
	case telemetry.ObsSourceDeleted:
		if !c.degraded {
			out = append(out, c.lost(ob, contract.SupportUnavailable, "the telemetry file was deleted while the harness ran"))
		}
	case telemetry.ObsSourceError:
		if !c.degraded {
			out = append(out, c.lost(ob, contract.SupportPartial, "reading the telemetry file failed: "+ob.Detail))
		}
	case telemetry.ObsSourceTruncated:
		c.warn("telemetry_truncated", "the telemetry file shrank; it is read again from the start")
	case telemetry.ObsSourceReplaced:
		c.warn("telemetry_replaced", "the telemetry file was replaced; the new file is read from the start")
	case telemetry.ObsSourceMode:
		if ob.Detail != "" {
			c.log.Warn("telemetry: polling", "reason", ob.Detail)
		}
	case telemetry.ObsHarnessSession:
		if ob.HarnessSessionID == "" || ob.HarnessSessionID == c.harness {
			break
		}
		c.harness = ob.HarnessSessionID
		s := provenance(ob)
		s["binding"] = "harness_session_id"
		if ob.HarnessVersion != "" {
			s["harness_version"] = ob.HarnessVersion
		}
		out = append(out, c.moment(moment.Moment{Event: contract.EventSessionStarted, HarnessSessionID: ob.HarnessSessionID, Summary: s}))
	case telemetry.ObsFrameOpening:
		out = append(out, c.frame(contract.EventFrameOpening, ob, provenance(ob)))
	case telemetry.ObsFrameOpened:
		s := provenance(ob)
		if ob.Model != "" {
			s["model"] = ob.Model
		}
		out = append(out, c.frame(contract.EventFrameOpened, ob, s))
	case telemetry.ObsFrameEnded:
		s := provenance(ob)
		if ob.Trigger != "" {
			s["stop_reason"] = ob.Trigger
		}
		out = append(out, c.frame(contract.EventFrameEnding, ob, s), c.frame(contract.EventFrameEnded, ob, clone(s)))
	case telemetry.ObsPressure:
		s := provenance(ob)
		s["tokens"] = ob.Tokens
		s["window"] = ob.Window
		s["percent"] = roundPercent(ob.Percent)
		s["level"] = string(ob.Level)
		s["previous_level"] = string(ob.Previous)
		if ob.Detail != "" {
			s["reason"] = ob.Detail
		}
		// The turn goes in the summary, not in frame_context: frame
		// moments are recorded once per (event, frame), and a turn can
		// change level more than once.
		if ob.FrameID != "" {
			s["frame_id"] = ob.FrameID
		}
		out = append(out, c.moment(moment.Moment{Event: contract.EventContextPressureObserved, Summary: s}))
	case telemetry.ObsCompacted:
		s := provenance(ob)
		s["trigger"] = ob.Trigger
		s["pre_tokens"] = ob.PreTokens
		s["post_tokens"] = ob.PostTokens
		if ob.Window > 0 {
			s["window"] = ob.Window
		}
		m := moment.Moment{Event: contract.EventContextCompacted, Summary: s}
		if ob.ID != "" {
			m.EventID = ob.ID + "/" + string(contract.EventContextCompacted)
		}
		out = append(out, c.moment(m))
	case telemetry.ObsUnreadable:
		if !c.drifted {
			c.drifted = true
			out = append(out, c.drift(ob))
		}
	case telemetry.ObsAPIError:
		code := ob.Trigger
		if code == "" {
			code = "unknown"
		}
		c.warn("harness_api_error", "the harness recorded a model API error: "+code)
	}
	return out
}

func (c *converter) sourceKind() telemetry.SourceKind { return c.kind }

// frame returns a frame moment: frame_context from the turn, the event id
// "<frame id>/<event>" (the hook bridge uses the same, so a moment both
// report is one receipt), and the frame in the summary too, since the
// receipt itself does not carry frame_context.
func (c *converter) frame(ev contract.Event, ob telemetry.Observation, s map[string]any) moment.Moment {
	fc := frameOf(ob)
	m := moment.Moment{Event: ev, Frame: fc, Summary: s}
	if fc != nil {
		m.EventID = fc.FrameID + "/" + string(ev)
		s["frame_id"] = fc.FrameID
		if fc.ParentFrameID != nil {
			s["parent_frame_id"] = *fc.ParentFrameID
		}
	}
	return c.moment(m)
}

// moment attaches the pending warnings to m.
func (c *converter) moment(m moment.Moment) moment.Moment {
	if len(c.warnings) > 0 {
		m.Warnings = c.warnings
		c.warnings = nil
	}
	return m
}

func (c *converter) warn(code, msg string) {
	cp := capTelemetry
	c.warnings = append(c.warnings, contract.Warning{Code: code, Message: msg, Capability: &cp})
}

// noteEvidence turns the unusable-line counts into warnings.
func (c *converter) noteEvidence(ob telemetry.Observation) {
	if n := ob.Evidence.InvalidLines; n > 0 {
		c.warn("telemetry_invalid_lines", fmt.Sprintf("%d line(s) of the telemetry file could not be parsed and were skipped", n))
	}
	if n := ob.Evidence.OverlongLines; n > 0 {
		c.warn("telemetry_overlong_lines", fmt.Sprintf("%d line(s) of the telemetry file were longer than the line limit and were skipped", n))
	}
}

func (c *converter) degradations(prev, cur contract.SupportState, evidence string, rc *contract.RetryClass) []contract.CapabilityDegradation {
	at := c.now().Unix()
	out := make([]contract.CapabilityDegradation, 0, 2)
	for _, capName := range []string{capTelemetry, capContextPressure} {
		ev := evidence
		out = append(out, contract.CapabilityDegradation{
			Capability: capName, PreviousSupport: prev, CurrentSupport: cur,
			ObservedAtEpochS: &at, Evidence: &ev, RetryClass: rc,
		})
	}
	return out
}

// lost reports the telemetry source as gone.
func (c *converter) lost(ob telemetry.Observation, cur contract.SupportState, evidence string) moment.Moment {
	c.degraded = true
	c.lostWhy = string(ob.Kind)
	rc := contract.RetryAfterReread
	s := provenance(ob)
	s["reason"] = string(ob.Kind)
	return c.moment(moment.Moment{
		Event:        contract.EventCapabilityDegraded,
		Status:       contract.StatusDegraded,
		Summary:      s,
		Degradations: c.degradations(contract.SupportSynthesized, cur, evidence, &rc),
	})
}

// drift reports lines the parser no longer understands: what could not
// be read, in which harness version (when the file records it).
func (c *converter) drift(ob telemetry.Observation) moment.Moment {
	version := ob.HarnessVersion
	if version == "" {
		version = "unknown"
	}
	evidence := fmt.Sprintf("the harness (version %s) wrote %s; context pressure is not measured from such lines until lifeloop reads the new format", version, ob.Detail)
	at := c.now().Unix()
	rc := contract.RetryAfterReconfigure
	s := provenance(ob)
	s["reason"] = "harness_drift"
	s["harness_version"] = version
	s["unreadable"] = ob.Detail
	return c.moment(moment.Moment{
		Event:   contract.EventCapabilityDegraded,
		Status:  contract.StatusDegraded,
		Summary: s,
		Degradations: []contract.CapabilityDegradation{{
			Capability: capContextPressure, PreviousSupport: contract.SupportSynthesized, CurrentSupport: contract.SupportPartial,
			ObservedAtEpochS: &at, Evidence: &evidence, RetryClass: &rc,
		}},
	})
}

// recovered reports the telemetry source back: the same capabilities go
// from unavailable back to synthesized.
func (c *converter) recovered(ob telemetry.Observation) moment.Moment {
	c.degraded = false
	s := provenance(ob)
	s["recovered"] = true
	s["reason"] = string(ob.Kind)
	s["recovered_from"] = c.lostWhy
	return c.moment(moment.Moment{
		Event:        contract.EventCapabilityDegraded,
		Summary:      s,
		Degradations: c.degradations(contract.SupportUnavailable, contract.SupportSynthesized, "the telemetry file is readable again", nil),
	})
}

// failed reports a watcher that could not run at all.
func (c *converter) failed(err error) moment.Moment {
	rc := contract.RetryAfterReconfigure
	c.degraded = true
	return c.moment(moment.Moment{
		Event:        contract.EventCapabilityDegraded,
		Status:       contract.StatusDegraded,
		Summary:      map[string]any{"source": string(c.sourceKind()), "reason": "watch_failed"},
		Degradations: c.degradations(contract.SupportSynthesized, contract.SupportUnavailable, err.Error(), &rc),
	})
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func roundPercent(p float64) float64 {
	return float64(int64(p*100+0.5)) / 100
}

// Resumed returns o following the session a launch continues (id, or
// the newest written session of o.Cwd when id is ""), read from its
// start for the binding and the pressure level, its existing records
// history: the turns the harness adds from now on are reported. Follow
// stays as o says (a newer file, e.g. a renewal's fresh session, is
// still switched to). ok is false when no such session exists yet: the
// launch is then followed as a new one.
func Resumed(o Options, id string) (Options, bool, error) {
	ro := o
	ro.LaunchedAt, ro.SessionID, ro.Path = time.Time{}, id, ""
	cfg, _, err := Config(ro)
	if err != nil {
		return o, false, err
	}
	cs, err := cfg.Discoverer.Candidates()
	if err != nil {
		return o, false, err
	}
	var pick *telemetry.Candidate
	var last time.Time
	for i := range cs {
		c := &cs[i]
		if id != "" && c.SessionID != id {
			continue
		}
		if w := c.LastWrite(); pick == nil || w.After(last) {
			pick, last = c, w
		}
	}
	if pick == nil {
		return o, false, nil
	}
	path, end, err := telemetry.SourceEnd(cfg.Discoverer, pick.Path)
	if err != nil {
		return o, false, err
	}
	o.Path, o.FromStart, o.HistoryOffset = path, true, end
	return o, true, nil
}

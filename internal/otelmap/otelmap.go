// Package otelmap turns a session's receipt ledger, entry by entry, into
// OpenTelemetry data: spans, log records and metric points. It is pure
// (no I/O, no clock, no SDK): the same ledger always gives the same
// output, with trace and span ids derived from the session id (package
// otelid), so a replay reproduces what a live export sent.
//
// The shape (docs/otel.md lists every name):
//
//   - one trace per lifeloop session, its root span lifeloop.session;
//   - one "invoke_agent {harness}" span per harness process incarnation
//     (the launch, every renewal's relaunch, and every switch to a new
//     harness session inside the process), with the GenAI semantic
//     conventions of SemconvVersion;
//   - one lifeloop.frame span per frame (turn), child of its incarnation
//     or of its parent frame;
//   - one lifeloop.renewal span per renewal, linked to the incarnations
//     before and after it;
//   - context pressure changes and compactions as span events, and a
//     renewal policy client's reports (gave up, fell back) as events of
//     the session span; a policy renewal's evidence on its renewal span;
//   - attention: each episode of waiting for a person as an event of
//     its incarnation, a turn's waiting as its frame span's attributes;
//   - every receipt as one log record correlated to its span;
//   - gauges, counters and histograms of context, sessions, frames and
//     waiting.
//
// A span is output when it ends: a session still running has its logs
// and metrics out, its open spans not yet.
package otelmap

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelid"
)

// SemconvVersion is the version of the OpenTelemetry semantic
// conventions whose names this mapping uses. The GenAI conventions are
// still "Development"; 1.41.0 is the last version the Go semconv
// packages carry gen_ai.* names for, and the test holds every emitted
// name to it (or to the lifeloop.* namespace).
const SemconvVersion = "1.41.0"

// SchemaURL is SemconvVersion's schema URL.
const SchemaURL = semconv.SchemaURL

// Span, event, log and attribute names of the lifeloop.* namespace.
const (
	SpanSession = "lifeloop.session"
	SpanFrame   = "lifeloop.frame"
	SpanRenewal = "lifeloop.renewal"

	EventPressure  = "lifeloop.context.pressure"
	EventCompacted = "lifeloop.context.compacted"
	// EventPolicyGaveUp and EventPolicyFallback are a renewal policy
	// client's reports ("lifeloop.policy." + its decision).
	EventPolicyGaveUp   = "lifeloop.policy.gave_up"
	EventPolicyFallback = "lifeloop.policy.fallback"

	AttrSessionID     = attribute.Key("lifeloop.session.id")
	AttrAdapter       = attribute.Key("lifeloop.adapter.id")
	AttrIncarnation   = attribute.Key("lifeloop.incarnation")
	AttrOutcome       = attribute.Key("lifeloop.session.outcome")
	AttrPhase         = attribute.Key("lifeloop.session.phase")
	AttrReason        = attribute.Key("lifeloop.session.reason")
	AttrSignal        = attribute.Key("lifeloop.exit.signal")
	AttrFrameID       = attribute.Key("lifeloop.frame.id")
	AttrFrameClass    = attribute.Key("lifeloop.frame.class")
	AttrFramePrompt   = attribute.Key("lifeloop.frame.prompt_bytes")
	AttrFrameResponse = attribute.Key("lifeloop.frame.response_bytes")
	AttrFrameDone     = attribute.Key("lifeloop.frame.finished")
	AttrRenewalNumber = attribute.Key("lifeloop.renewal.number")
	AttrRenewalResume = attribute.Key("lifeloop.renewal.resume")
	AttrLinkRole      = attribute.Key("lifeloop.link.role")
	AttrLevel         = attribute.Key("lifeloop.context.level")
	AttrPrevLevel     = attribute.Key("lifeloop.context.previous_level")
	AttrTokens        = attribute.Key("lifeloop.context.tokens")
	AttrWindow        = attribute.Key("lifeloop.context.window")
	AttrUtilization   = attribute.Key("lifeloop.context.utilization")
	AttrSource        = attribute.Key("lifeloop.evidence.source")
	AttrTrigger       = attribute.Key("lifeloop.compaction.trigger")
	AttrPreTokens     = attribute.Key("lifeloop.compaction.pre_tokens")
	AttrPostTokens    = attribute.Key("lifeloop.compaction.post_tokens")
	AttrSequence      = attribute.Key("lifeloop.sequence")
	AttrReceiptID     = attribute.Key("lifeloop.receipt.id")
	AttrStatus        = attribute.Key("lifeloop.receipt.status")
)

// Attributes of a renewal policy client's evidence and reports.
const (
	// A policy renewal's evidence (renewal.Policy), on its renewal span.
	AttrPolicyClient           = attribute.Key("lifeloop.renewal.policy.client")
	AttrPolicyThresholdPercent = attribute.Key("lifeloop.renewal.policy.threshold_percent")
	AttrPolicyThresholdTokens  = attribute.Key("lifeloop.renewal.policy.threshold_tokens")
	AttrPolicyTriggerPercent   = attribute.Key("lifeloop.renewal.policy.trigger_percent")
	AttrPolicyTriggerTokens    = attribute.Key("lifeloop.renewal.policy.trigger_tokens")
	AttrPolicyWindow           = attribute.Key("lifeloop.renewal.policy.window")
	AttrPolicyNoteDigest       = attribute.Key("lifeloop.renewal.policy.note_digest")
	AttrPolicyNoteBytes        = attribute.Key("lifeloop.renewal.policy.note_bytes")
	AttrPolicyNoteSource       = attribute.Key("lifeloop.renewal.policy.note_source")
	AttrPolicyThisHour         = attribute.Key("lifeloop.renewal.policy.renewals_this_hour")
	AttrPolicyPerHour          = attribute.Key("lifeloop.renewal.policy.per_hour")
	// A policy report's reason and detail, on its span event.
	AttrPolicyReason = attribute.Key("lifeloop.policy.reason")
	AttrPolicyDetail = attribute.Key("lifeloop.policy.detail")
)

// Metric names.
const (
	MetricUtilization = "lifeloop.context.utilization"
	MetricTokens      = "lifeloop.context.tokens"
	MetricWindow      = "lifeloop.context.window"
	MetricActive      = "lifeloop.sessions.active"
	MetricSessionDur  = "lifeloop.session.duration"
	MetricFrameDur    = "lifeloop.frame.duration"
	MetricFrames      = "lifeloop.frames"
	MetricRenewals    = "lifeloop.renewals"
	MetricCompactions = "lifeloop.context.compactions"
)

// Outcome values of lifeloop.session.outcome.
const (
	OutcomeSuccess   = "success"
	OutcomeFailure   = "failure"
	OutcomeCancelled = "cancelled"
	OutcomeLost      = "lost"
)

// Output is what one ledger entry gives.
type Output struct {
	Spans   []Span
	Logs    []Log
	Metrics []Metric
}

// Empty reports whether o holds nothing.
func (o Output) Empty() bool { return len(o.Spans)+len(o.Logs)+len(o.Metrics) == 0 }

// Span is one ended span of the session's trace.
type Span struct {
	ID, Parent trace.SpanID
	Name       string
	Start, End time.Time
	Attrs      []attribute.KeyValue
	Events     []Event
	Links      []Link
	Status     codes.Code
	StatusDesc string
}

// Event is one span event.
type Event struct {
	Name  string
	Time  time.Time
	Attrs []attribute.KeyValue
}

// Link points at another span of the same trace.
type Link struct {
	SpanID trace.SpanID
	Attrs  []attribute.KeyValue
}

// Severity of a log record (the OpenTelemetry severity numbers).
type Severity int

// The severities used.
const (
	SeverityInfo  Severity = 9
	SeverityWarn  Severity = 13
	SeverityError Severity = 17
)

// Log is one receipt as a log record: EventName is the receipt's event,
// Body the receipt as recorded in the ledger.
type Log struct {
	Time      time.Time
	EventName string
	Severity  Severity
	Body      json.RawMessage
	Attrs     []attribute.KeyValue
	SpanID    trace.SpanID
}

// MetricKind says how a Metric is aggregated.
type MetricKind int

// The kinds. Sums and histograms are cumulative from the session's start.
const (
	Gauge MetricKind = iota
	Counter
	UpDownCounter
	Histogram
	// FloatCounter is a monotonic sum of Value.
	FloatCounter
)

// Metric is one data point.
type Metric struct {
	Name, Unit, Description string
	Kind                    MetricKind
	Start, Time             time.Time
	Attrs                   []attribute.KeyValue
	// Value for gauges and float counters; Int for counters.
	Value float64
	Int   int64
	// Hist for histograms.
	Hist *Hist
}

// Hist is a cumulative histogram.
type Hist struct {
	Bounds   []float64
	Counts   []uint64
	Count    uint64
	Sum      float64
	Min, Max float64
}

// DurationBounds are the bucket bounds of the duration histograms, in
// seconds.
var DurationBounds = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600}

func (h *Hist) observe(v float64) {
	if h.Count == 0 || v < h.Min {
		h.Min = v
	}
	if h.Count == 0 || v > h.Max {
		h.Max = v
	}
	h.Count++
	h.Sum += v
	i := 0
	for i < len(h.Bounds) && v > h.Bounds[i] {
		i++
	}
	h.Counts[i]++
}

func (h *Hist) clone() *Hist {
	c := *h
	c.Counts = append([]uint64(nil), h.Counts...)
	return &c
}

func newHist() *Hist {
	return &Hist{Bounds: DurationBounds, Counts: make([]uint64, len(DurationBounds)+1)}
}

// openSpan is a span still running.
type openSpan struct {
	key    string
	span   Span
	parent *openSpan
	// billed: the frame's usage block set its gen_ai.usage.* (the
	// turn's tokens), which its context observation does not replace.
	billed bool
}

func (s *openSpan) set(kv ...attribute.KeyValue) {
	for _, n := range kv {
		replaced := false
		for i := range s.span.Attrs {
			if s.span.Attrs[i].Key == n.Key {
				s.span.Attrs[i] = n
				replaced = true
				break
			}
		}
		if !replaced {
			s.span.Attrs = append(s.span.Attrs, n)
		}
	}
}

// Mapper folds one session's ledger, in order, into Output.
type Mapper struct {
	sid   string
	start time.Time

	session     *openSpan
	incarnation *openSpan
	incarnN     int
	// process numbers the harness processes as the launcher does (each
	// session.starting that is not a switch inside the process), inProc
	// the incarnations of the running one: the first incarnation of
	// process n has the span id TRACEPARENT handed it.
	process, inProc int
	renewal         *openSpan
	renewals        int
	frames          map[string]*openSpan
	frameOrder      []string
	// held is the frame that ended last, kept (up to HoldFrame, by the
	// receipts' times) until a receipt that is neither a tick nor its own
	// context observation: the transcript reports a turn's usage after
	// the turn's end.
	held    *openSpan
	ended   bool
	adapter string
	conv    string

	frameCount, compactions int64
	sessionDur, frameDur    *Hist

	att attentionState
	// cost is the session's priced cost so far, by provenance.
	cost map[string]float64
}

// New returns the Mapper of lifeloop session id.
func New(id string) *Mapper {
	return &Mapper{sid: id, frames: map[string]*openSpan{}, sessionDur: newHist(), frameDur: newHist()}
}

// TraceID is the session's trace id.
func (m *Mapper) TraceID() trace.TraceID { return otelid.TraceID(m.sid) }

// Open returns the names of the spans still running.
func (m *Mapper) Open() []string {
	var names []string
	for _, s := range []*openSpan{m.session, m.incarnation, m.renewal} {
		if s != nil {
			names = append(names, s.span.Name)
		}
	}
	for _, id := range m.frameOrder {
		names = append(names, m.frames[id].span.Name)
	}
	if m.held != nil {
		names = append(names, m.held.span.Name)
	}
	return names
}

// Ended reports whether the session's final session.ended was mapped.
func (m *Mapper) Ended() bool { return m.ended }

// Time returns when receipt r was recorded: the millisecond of its ULID
// receipt id when that falls in its at_epoch_s second, else that second.
func Time(r contract.LifecycleReceipt) time.Time {
	sec := time.Unix(r.AtEpochS, 0)
	if _, rest, ok := strings.Cut(r.ReceiptID, "_"); ok {
		if u, err := ulid.ParseStrict(rest); err == nil {
			t := ulid.Time(u.Time())
			if !t.Before(sec) && t.Before(sec.Add(time.Second)) {
				return t
			}
		}
	}
	return sec
}

func (m *Mapper) spanID(key string) trace.SpanID { return otelid.SpanID(m.sid, key) }

func (m *Mapper) open(key, name string, parent *openSpan, t time.Time, attrs ...attribute.KeyValue) *openSpan {
	s := &openSpan{key: key, parent: parent, span: Span{ID: m.spanID(key), Name: name, Start: t}}
	if parent != nil {
		s.span.Parent = parent.span.ID
	}
	s.set(attrs...)
	return s
}

func (m *Mapper) end(s *openSpan, t time.Time, out *Output) {
	if t.Before(s.span.Start) {
		t = s.span.Start
	}
	s.span.End = t
	out.Spans = append(out.Spans, s.span)
}

// Map folds one ledger entry in and returns what it gives.
func (m *Mapper) Map(e ledger.Entry) Output {
	var out Output
	r := e.Receipt
	t := Time(r)
	sum := r.TelemetrySummary
	if m.start.IsZero() {
		m.start = t
		m.adapter = r.AdapterID
	}
	if r.HarnessSessionID != nil && *r.HarnessSessionID != "" {
		m.conv = *r.HarnessSessionID
	}
	if m.held != nil && !m.holds(r, t) {
		m.flushHeld(&out)
	}
	renewStep := ""
	if s, _ := sum["reason"].(string); s == "renewal" {
		renewStep, _ = sum["renewal_step"].(string)
	}
	var at *openSpan // the span this receipt belongs to
	switch r.Event {
	case contract.EventSessionStarting:
		m.ensureSession(t, &out)
		if m.incarnation != nil {
			m.endIncarnation(t, nil, &out)
		}
		if why, _ := sum[contract.SummaryReason].(string); why != contract.HarnessSessionSwitched {
			m.process, m.inProc = m.process+1, 0
		}
		at = m.openIncarnation(t)
	case contract.EventSessionStarted:
		at = m.ensureIncarnation(t, &out)
		if m.conv != "" {
			at.set(semconv.GenAIConversationIDKey.String(m.conv))
		}
		if v, ok := sum["harness_version"].(string); ok && v != "" {
			at.set(semconv.GenAIAgentVersionKey.String(v))
		}
		if pid, ok := number(sum["pid"]); ok {
			at.set(semconv.ProcessPIDKey.Int(int(pid)))
		}
		if renewStep == "started" && m.renewal != nil {
			at.span.Links = append(at.span.Links, Link{SpanID: m.renewal.span.ID, Attrs: []attribute.KeyValue{AttrLinkRole.String("renewal")}})
			m.end(m.renewal, t, &out)
			m.renewal = nil
		}
	case contract.EventSessionEnding:
		at = m.ensureIncarnation(t, &out)
		if renewStep == "ending" && m.renewal == nil {
			m.renewals++
			m.renewal = m.open("renewal/"+itoa(m.renewals), SpanRenewal, m.session, t, AttrRenewalNumber.Int(m.renewals))
			m.renewal.set(policyAttrs(sum)...)
			if b, ok := sum["resume"].(bool); ok {
				m.renewal.set(AttrRenewalResume.Bool(b))
			}
			m.renewal.span.Links = append(m.renewal.span.Links, Link{SpanID: at.span.ID, Attrs: []attribute.KeyValue{AttrLinkRole.String("previous")}})
			out.Metrics = append(out.Metrics, m.counter(MetricRenewals, "{renewal}", "Renewals (reset and relaunch) of the harness", t, int64(m.renewals)))
			at = m.renewal
		}
	case contract.EventSessionEnded:
		inc := m.ensureIncarnation(t, &out)
		at = inc
		// A renewal's stop, or a switch to a new harness session inside
		// the process, ends the incarnation only: the session goes on.
		final := renewStep == "" && str(sum["reason"]) != contract.HarnessSessionSwitched
		// session.ended carries the session's attention, with the
		// episode its end closed.
		m.attentionBlock(t, sum, EndedBySessionEnd, &out)
		if final {
			m.attentionEnd(t, &out)
		}
		m.endIncarnation(t, sum, &out)
		if final {
			m.endSession(t, sum, &out)
		}
	case contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded:
		at = m.frame(r, t, sum, &out)
		if r.Event == contract.EventFrameEnded && at != m.incarnation {
			turnAttention(at, sum)
			m.turnUsage(at, t, sum, &out)
		}
	case contract.EventSupervisorTick:
		at = m.current()
		m.attentionBlock(t, sum, EndedByChange, &out)
	case contract.EventContextPressureObserved:
		at = m.pressure(t, sum, &out)
	case contract.EventContextCompacted:
		at = m.ensureIncarnation(t, &out)
		attrs := []attribute.KeyValue{AttrTrigger.String(str(sum["trigger"]))}
		if v, ok := number(sum["pre_tokens"]); ok {
			attrs = append(attrs, AttrPreTokens.Int64(int64(v)))
		}
		if v, ok := number(sum["post_tokens"]); ok {
			attrs = append(attrs, AttrPostTokens.Int64(int64(v)))
		}
		at.span.Events = append(at.span.Events, Event{Name: EventCompacted, Time: t, Attrs: attrs})
		m.compactions++
		out.Metrics = append(out.Metrics, m.counter(MetricCompactions, "{compaction}", "Context compactions the harness reported", t, m.compactions))
	case contract.EventCapabilityDegraded:
		at = m.current()
		m.policyReport(t, sum, &out)
	default:
		at = m.current()
	}
	out.Logs = append(out.Logs, m.log(e, t, at))
	return out
}

// policyAttrs are the renewal span's attributes of the evidence a
// policy renewal's receipts carry under "policy" (none for a renewal a
// person asked for).
func policyAttrs(sum map[string]any) []attribute.KeyValue {
	p, ok := sum["policy"].(map[string]any)
	if !ok {
		return nil
	}
	var attrs []attribute.KeyValue
	strs := []struct {
		k    attribute.Key
		name string
	}{{AttrPolicyClient, "client"}, {AttrPolicyNoteDigest, "note_digest"}, {AttrPolicyNoteSource, "note_source"}}
	for _, f := range strs {
		if v := str(p[f.name]); v != "" {
			attrs = append(attrs, f.k.String(v))
		}
	}
	for _, f := range []struct {
		k    attribute.Key
		name string
	}{{AttrPolicyThresholdPercent, "threshold_percent"}, {AttrPolicyTriggerPercent, "trigger_percent"}} {
		if v, ok := number(p[f.name]); ok {
			attrs = append(attrs, f.k.Float64(v))
		}
	}
	for _, f := range []struct {
		k    attribute.Key
		name string
	}{
		{AttrPolicyThresholdTokens, "threshold_tokens"}, {AttrPolicyTriggerTokens, "trigger_tokens"}, {AttrPolicyWindow, "window"},
		{AttrPolicyNoteBytes, "note_bytes"}, {AttrPolicyThisHour, "renewals_this_hour"}, {AttrPolicyPerHour, "per_hour"},
	} {
		if v, ok := number(p[f.name]); ok {
			attrs = append(attrs, f.k.Int64(int64(v)))
		}
	}
	return attrs
}

// policyReport puts a renewal policy client's report (a
// capability.degraded whose "policy" has a decision) on the session
// span as an event (EventPolicyGaveUp, EventPolicyFallback), with its
// reason, detail and client.
func (m *Mapper) policyReport(t time.Time, sum map[string]any, out *Output) {
	p, _ := sum["policy"].(map[string]any)
	name := map[string]string{"gave_up": EventPolicyGaveUp, "fallback": EventPolicyFallback}[str(p["decision"])]
	if name == "" {
		return
	}
	m.ensureSession(t, out)
	if m.session == nil {
		return // after the session's end
	}
	attrs := []attribute.KeyValue{AttrPolicyReason.String(str(p["reason"])), AttrPolicyDetail.String(str(p["detail"]))}
	if c := str(p["client"]); c != "" {
		attrs = append(attrs, AttrPolicyClient.String(c))
	}
	m.session.span.Events = append(m.session.span.Events, Event{Name: name, Time: t, Attrs: attrs})
}

// current is the innermost span a receipt without a place of its own
// belongs to: the incarnation, else the session.
func (m *Mapper) current() *openSpan {
	if m.incarnation != nil {
		return m.incarnation
	}
	return m.session
}

func (m *Mapper) ensureSession(t time.Time, out *Output) {
	if m.session != nil || m.ended {
		return
	}
	m.session = m.open(otelid.SessionSpan, SpanSession, nil, t, AttrSessionID.String(m.sid), AttrAdapter.String(m.adapter))
	out.Metrics = append(out.Metrics, Metric{Name: MetricActive, Unit: "{session}", Description: "Sessions running (1 while this session runs, 0 after)", Kind: UpDownCounter, Start: m.start, Time: t, Int: 1})
}

func (m *Mapper) ensureIncarnation(t time.Time, out *Output) *openSpan {
	m.ensureSession(t, out)
	if m.incarnation == nil {
		return m.openIncarnation(t)
	}
	return m.incarnation
}

func (m *Mapper) openIncarnation(t time.Time) *openSpan {
	m.incarnN++
	m.process = max(m.process, 1)
	m.inProc++
	key := otelid.ProcessSpan(m.process)
	if m.inProc > 1 {
		key = otelid.ProcessSwitchSpan(m.process, m.inProc)
	}
	m.incarnation = m.open(key, "invoke_agent "+m.adapter, m.session, t,
		semconv.GenAIOperationNameInvokeAgent,
		semconv.GenAIAgentNameKey.String(m.adapter),
		AttrIncarnation.Int(m.incarnN))
	if m.renewal != nil {
		m.renewal.span.Links = append(m.renewal.span.Links, Link{SpanID: m.incarnation.span.ID, Attrs: []attribute.KeyValue{AttrLinkRole.String("next")}})
	}
	return m.incarnation
}

// exitAttrs are the exit facts of a session.ended summary.
func exitAttrs(sum map[string]any) (attrs []attribute.KeyValue, outcome, reason string) {
	reason = str(sum[contract.SummaryReason])
	outcome = str(sum[contract.SummaryOutcome])
	switch {
	case reason == "wrapper_lost":
		outcome = OutcomeLost
	case outcome == "":
		outcome = OutcomeFailure
	}
	attrs = append(attrs, AttrOutcome.String(outcome), AttrReason.String(reason), AttrPhase.String(str(sum[contract.SummaryPhase])))
	if v, ok := number(sum[contract.SummaryExitStatus]); ok {
		attrs = append(attrs, semconv.ProcessExitCodeKey.Int(int(v)))
	}
	if v, ok := number(sum[contract.SummarySignal]); ok {
		attrs = append(attrs, AttrSignal.Int(int(v)))
	}
	if outcome == OutcomeFailure || outcome == OutcomeLost {
		attrs = append(attrs, semconv.ErrorTypeKey.String(reason))
	}
	return attrs, outcome, reason
}

func status(s *openSpan, outcome, reason string) {
	switch outcome {
	case OutcomeSuccess:
		s.span.Status = codes.Ok
	case OutcomeFailure, OutcomeLost:
		s.span.Status, s.span.StatusDesc = codes.Error, reason
	}
}

// endIncarnation ends the running incarnation and its open frames; sum
// is its session.ended summary (nil when it ended without one).
func (m *Mapper) endIncarnation(t time.Time, sum map[string]any, out *Output) {
	m.flushHeld(out)
	for _, id := range m.frameOrder {
		f := m.frames[id]
		f.set(AttrFrameDone.Bool(false))
		m.end(f, t, out)
	}
	m.frames, m.frameOrder = map[string]*openSpan{}, nil
	if m.incarnation == nil {
		return
	}
	if sum != nil {
		attrs, outcome, reason := exitAttrs(sum)
		m.incarnation.set(attrs...)
		status(m.incarnation, outcome, reason)
	}
	m.end(m.incarnation, t, out)
	m.incarnation = nil
}

func (m *Mapper) endSession(t time.Time, sum map[string]any, out *Output) {
	if m.session == nil {
		return
	}
	if m.renewal != nil {
		m.end(m.renewal, t, out)
		m.renewal = nil
	}
	attrs, outcome, reason := exitAttrs(sum)
	m.session.set(attrs...)
	if m.conv != "" {
		m.session.set(semconv.GenAIConversationIDKey.String(m.conv))
	}
	status(m.session, outcome, reason)
	m.end(m.session, t, out)
	d := t.Sub(m.session.span.Start).Seconds()
	m.sessionDur.observe(d)
	m.session = nil
	m.ended = true
	out.Metrics = append(out.Metrics,
		Metric{Name: MetricActive, Unit: "{session}", Description: "Sessions running (1 while this session runs, 0 after)", Kind: UpDownCounter, Start: m.start, Time: t, Int: 0},
		Metric{Name: MetricSessionDur, Unit: "s", Description: "Wall-clock duration of lifeloop sessions", Kind: Histogram, Start: m.start, Time: t, Attrs: []attribute.KeyValue{AttrOutcome.String(outcome)}, Hist: m.sessionDur.clone()})
}

func (m *Mapper) frame(r contract.LifecycleReceipt, t time.Time, sum map[string]any, out *Output) *openSpan {
	id := str(sum["frame_id"])
	inc := m.ensureIncarnation(t, out)
	if id == "" {
		return inc
	}
	f := m.frames[id]
	if f == nil {
		parent := inc
		class := string(contract.FrameTopLevel)
		if p := str(sum["parent_frame_id"]); p != "" {
			class = string(contract.FrameSubcall)
			if pf := m.frames[p]; pf != nil {
				parent = pf
			}
		}
		f = m.open("frame/"+itoa(m.incarnN)+"/"+id, SpanFrame, parent, t,
			AttrFrameID.String(id), AttrFrameClass.String(class), semconv.GenAIAgentNameKey.String(m.adapter))
		if m.conv != "" {
			f.set(semconv.GenAIConversationIDKey.String(m.conv))
		}
		m.frames[id] = f
		m.frameOrder = append(m.frameOrder, id)
	}
	if v, ok := number(sum["prompt_bytes"]); ok {
		f.set(AttrFramePrompt.Int64(int64(v)))
	}
	if v, ok := number(sum["last_message_bytes"]); ok {
		f.set(AttrFrameResponse.Int64(int64(v)))
	}
	if v := str(sum["model"]); v != "" {
		f.set(semconv.GenAIRequestModelKey.String(v))
		inc.set(semconv.GenAIRequestModelKey.String(v))
	}
	if v := str(sum["stop_reason"]); v != "" {
		f.set(semconv.GenAIResponseFinishReasonsKey.StringSlice([]string{v}))
	}
	if r.Event != contract.EventFrameEnded {
		return f
	}
	f.set(AttrFrameDone.Bool(true))
	if t.Before(f.span.Start) {
		t = f.span.Start
	}
	f.span.End = t
	m.flushHeld(out)
	m.held = f
	delete(m.frames, id)
	for i, o := range m.frameOrder {
		if o == id {
			m.frameOrder = append(m.frameOrder[:i], m.frameOrder[i+1:]...)
			break
		}
	}
	m.frameCount++
	m.frameDur.observe(t.Sub(f.span.Start).Seconds())
	out.Metrics = append(out.Metrics,
		m.counter(MetricFrames, "{frame}", "Frames (turns) that ended", t, m.frameCount),
		Metric{Name: MetricFrameDur, Unit: "s", Description: "Duration of frames (turns)", Kind: Histogram, Start: m.start, Time: t, Hist: m.frameDur.clone()})
	return f
}

func (m *Mapper) pressure(t time.Time, sum map[string]any, out *Output) *openSpan {
	at := m.ensureIncarnation(t, out)
	evTime := t
	if f := m.frames[str(sum["frame_id"])]; f != nil {
		at = f
	} else if m.held != nil {
		// The ended frame's own observation (Map flushed it otherwise).
		at = m.held
		evTime = m.held.span.End
	}
	level, source := str(sum["level"]), str(sum["source"])
	attrs := []attribute.KeyValue{AttrLevel.String(level), AttrPrevLevel.String(str(sum["previous_level"])), AttrSource.String(source)}
	if id := str(sum["frame_id"]); id != "" {
		attrs = append(attrs, AttrFrameID.String(id))
	}
	tokens, hasTokens := number(sum["tokens"])
	window, hasWindow := number(sum["window"])
	percent, hasPercent := number(sum["percent"])
	if hasTokens {
		attrs = append(attrs, AttrTokens.Int64(int64(tokens)))
		if at != m.incarnation && at != m.session && !at.billed {
			// The context the frame's last model request carried.
			at.set(semconv.GenAIUsageInputTokensKey.Int64(int64(tokens)))
		}
	}
	if hasWindow {
		attrs = append(attrs, AttrWindow.Int64(int64(window)))
	}
	if hasPercent {
		attrs = append(attrs, AttrUtilization.Float64(percent/100))
	}
	at.span.Events = append(at.span.Events, Event{Name: EventPressure, Time: evTime, Attrs: attrs})
	pa := []attribute.KeyValue{AttrLevel.String(level), AttrSource.String(source)}
	if hasPercent {
		out.Metrics = append(out.Metrics, Metric{Name: MetricUtilization, Unit: "1", Description: "Share of the context window in use (0 to 1)", Kind: Gauge, Time: t, Attrs: pa, Value: percent / 100})
	}
	if hasTokens {
		out.Metrics = append(out.Metrics, Metric{Name: MetricTokens, Unit: "{token}", Description: "Tokens in the context window", Kind: Gauge, Time: t, Attrs: pa, Value: tokens})
	}
	if hasWindow {
		out.Metrics = append(out.Metrics, Metric{Name: MetricWindow, Unit: "{token}", Description: "Size of the context window", Kind: Gauge, Time: t, Value: window})
	}
	return at
}

// HoldFrame bounds how long, in receipt time, an ended frame waits for
// its context observation before it is output without one.
const HoldFrame = 5 * time.Second

// holds reports whether receipt r, recorded at t, leaves the held frame
// held.
func (m *Mapper) holds(r contract.LifecycleReceipt, t time.Time) bool {
	if t.Sub(m.held.span.End) > HoldFrame {
		return false
	}
	switch r.Event {
	case contract.EventSupervisorTick:
		return true
	case contract.EventContextPressureObserved:
		return str(r.TelemetrySummary["frame_id"]) == m.held.span.frameID()
	}
	return false
}

// flushHeld outputs the held frame, if any.
func (m *Mapper) flushHeld(out *Output) {
	if m.held != nil {
		out.Spans = append(out.Spans, m.held.span)
		m.held = nil
	}
}

func (m *Mapper) counter(name, unit, desc string, t time.Time, n int64) Metric {
	return Metric{Name: name, Unit: unit, Description: desc, Kind: Counter, Start: m.start, Time: t, Int: n}
}

func (m *Mapper) log(e ledger.Entry, t time.Time, at *openSpan) Log {
	r := e.Receipt
	l := Log{Time: t, EventName: string(r.Event), Severity: SeverityInfo, Body: json.RawMessage(e.Raw)}
	switch {
	case r.Status == contract.StatusFailed:
		l.Severity = SeverityError
	case r.Event == contract.EventCapabilityDegraded || r.Event == contract.EventReceiptGapDetected || len(r.Warnings) > 0:
		l.Severity = SeverityWarn
	}
	l.Attrs = []attribute.KeyValue{
		AttrSequence.Int64(int64(e.Sequence)),
		AttrReceiptID.String(r.ReceiptID),
		AttrSessionID.String(m.sid),
		AttrAdapter.String(r.AdapterID),
		AttrStatus.String(string(r.Status)),
	}
	if r.HarnessSessionID != nil && *r.HarnessSessionID != "" {
		l.Attrs = append(l.Attrs, semconv.GenAIConversationIDKey.String(*r.HarnessSessionID))
	}
	if at != nil {
		l.SpanID = at.span.ID
	}
	return l
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

// frameID is a frame span's lifeloop.frame.id ("" for other spans).
func (s Span) frameID() string {
	for _, kv := range s.Attrs {
		if kv.Key == AttrFrameID {
			return kv.Value.AsString()
		}
	}
	return ""
}

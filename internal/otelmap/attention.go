package otelmap

import (
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lifeloop/lifeloop/internal/attention"
)

// Attention's names (docs/otel.md): the episode event, its attributes,
// the turn's waiting and the metrics of sessions that wait for a person.
const (
	// EventAttentionEpisode is one episode of waiting, on the incarnation
	// span, at the episode's start (clamped to the span's), when it ends.
	EventAttentionEpisode = "lifeloop.attention.episode"

	AttrAttentionKind     = attribute.Key("lifeloop.attention.kind")
	AttrAttentionEpisode  = attribute.Key("lifeloop.attention.episode.id")
	AttrAttentionDetail   = attribute.Key("lifeloop.attention.detail")
	AttrAttentionTurn     = attribute.Key("lifeloop.attention.turn")
	AttrAttentionDuration = attribute.Key("lifeloop.attention.duration_ms")
	// AttrAttentionEndedBy is "attention_changed" for an episode a change
	// of state ended, "session_ended" for one still open at the end.
	AttrAttentionEndedBy = attribute.Key("lifeloop.attention.ended_by")
	// AttrAttentionEpisodes and AttrWaitedPrefix+<kind> are a frame
	// span's: how many episodes its turn had and how long each kind
	// waited, in ms.
	AttrAttentionEpisodes = attribute.Key("lifeloop.attention.episodes")
	AttrWaitedPrefix      = "lifeloop.attention.waited_ms."

	MetricWaiting  = "lifeloop.sessions.waiting"
	MetricWaitTime = "lifeloop.attention.wait.duration"
)

// The ends of an episode (AttrAttentionEndedBy).
const (
	EndedByChange     = "attention_changed"
	EndedBySessionEnd = "session_ended"
)

// WaitBounds are the bucket bounds of MetricWaitTime, in seconds: a
// dialog answered in a second to a session left waiting for hours.
var WaitBounds = []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600}

// waitingKinds are the states MetricWaiting has a point for.
var waitingKinds = []attention.State{attention.NeedsPermission, attention.NeedsAnswer, attention.WaitingForInput, attention.StoppedOnError}

// attentionState is what the mapper keeps of a session's attention.
type attentionState struct {
	// open is the latest block while it is a waiting one (its episode
	// not yet closed), for the session's end.
	open *attention.Block
	// seen: a block was mapped, so the waiting points end at 0.
	seen bool
	// pointsAt is when the waiting points were last output.
	pointsAt time.Time
	hist     map[attention.State]*Hist
}

// attentionBlock maps the attention block of a supervisor.tick or a
// session.ended: the episode it closed as an event and a histogram
// observation (endedBy says what ended it), and the session's waiting
// points (1 for the state's kind, 0 for the others).
func (m *Mapper) attentionBlock(t time.Time, sum map[string]any, endedBy string, out *Output) {
	b, ok := attention.BlockFrom(sum)
	if !ok {
		return
	}
	m.att.seen = true
	if c := b.Closed; c != nil && c.Kind.Waiting() {
		end := t
		if c.End != 0 {
			end = time.UnixMilli(c.End)
		}
		m.episode(*c, end, endedBy, out)
		if m.att.open != nil && m.att.open.Episode == c.ID {
			m.att.open = nil
		}
	}
	if b.State.Waiting() && b.Episode != 0 {
		m.att.open = &b
	} else {
		m.att.open = nil
	}
	out.Metrics = append(out.Metrics, m.waitingPoints(t, b.State)...)
}

// attentionEnd closes the episode still open when the session ends, at
// t (when its session.ended did not carry it closed: a ledger sealed
// after a lost wrapper), and brings the waiting points to 0.
func (m *Mapper) attentionEnd(t time.Time, out *Output) {
	if o := m.att.open; o != nil {
		m.att.open = nil
		e := attention.EpisodeBlock{ID: o.Episode, Kind: o.State, Source: o.Source, Detail: o.Detail, Turn: o.Turn,
			Start: o.Since, End: t.UnixMilli(), DurationMs: max(0, t.UnixMilli()-o.Since)}
		m.episode(e, t, EndedBySessionEnd, out)
	}
	if m.att.seen && !m.att.pointsAt.Equal(t) {
		out.Metrics = append(out.Metrics, m.waitingPoints(t, "")...)
	}
}

// episode outputs episode e, ended at end: an event on the incarnation
// span and an observation of the waiting time.
func (m *Mapper) episode(e attention.EpisodeBlock, end time.Time, endedBy string, out *Output) {
	// The span the episode ended in: the incarnation, else the session.
	if inc := m.current(); inc != nil {
		at := time.UnixMilli(e.Start)
		if at.Before(inc.span.Start) {
			at = inc.span.Start
		}
		attrs := []attribute.KeyValue{
			AttrAttentionKind.String(string(e.Kind)), AttrAttentionEpisode.Int(e.ID), AttrSource.String(string(e.Source)),
			AttrAttentionDetail.String(e.Detail), AttrAttentionTurn.Int(e.Turn), AttrAttentionDuration.Int64(e.DurationMs),
			AttrAttentionEndedBy.String(endedBy),
		}
		inc.span.Events = append(inc.span.Events, Event{Name: EventAttentionEpisode, Time: at, Attrs: attrs})
	}
	if m.att.hist == nil {
		m.att.hist = map[attention.State]*Hist{}
	}
	h := m.att.hist[e.Kind]
	if h == nil {
		h = &Hist{Bounds: WaitBounds, Counts: make([]uint64, len(WaitBounds)+1)}
		m.att.hist[e.Kind] = h
	}
	h.observe(float64(e.DurationMs) / 1000)
	out.Metrics = append(out.Metrics, Metric{Name: MetricWaitTime, Unit: "s", Description: "Time sessions waited for a person, per episode",
		Kind: Histogram, Start: m.start, Time: end, Attrs: []attribute.KeyValue{AttrAttentionKind.String(string(e.Kind)), AttrAdapter.String(m.adapter)},
		Hist: h.clone()})
}

// waitingPoints are MetricWaiting's points at t: 1 for state's kind, 0
// for every other.
func (m *Mapper) waitingPoints(t time.Time, state attention.State) []Metric {
	m.att.pointsAt = t
	pts := make([]Metric, 0, len(waitingKinds))
	for _, k := range waitingKinds {
		var n int64
		if k == state {
			n = 1
		}
		pts = append(pts, Metric{Name: MetricWaiting, Unit: "{session}", Description: "Sessions waiting for a person, by kind (1 while this session waits so, 0 otherwise)",
			Kind: UpDownCounter, Start: m.start, Time: t, Attrs: []attribute.KeyValue{AttrAttentionKind.String(string(k))}, Int: n})
	}
	return pts
}

// turnAttention sets a frame.ended's turn block on its frame span: the
// turn's waiting per kind, in ms, and its number of episodes.
func turnAttention(f *openSpan, sum map[string]any) {
	tb, ok := attention.TurnBlockFrom(sum)
	if !ok || f == nil {
		return
	}
	kinds := make([]string, 0, len(tb.WaitedMs))
	for k := range tb.WaitedMs {
		kinds = append(kinds, string(k))
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		f.set(attribute.Int64(AttrWaitedPrefix+k, tb.WaitedMs[attention.State(k)]))
	}
	f.set(AttrAttentionEpisodes.Int(tb.Episodes))
}

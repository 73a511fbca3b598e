package launcher

import (
	"slices"

	"github.com/lifeloop/lifeloop/contract"
)

// One coherent stream (docs/contract.md): whatever order the sources
// report in — the process, the hook bridge, a harness's notify program,
// the transcript — a session's ledger tells one story.
//
// A ledger is a sequence of harness sessions, each opened by
// session.starting (the launch, or a renewal's relaunch). In each:
// session.started once, session.ending at most once, session.ended once.
// Per frame id: frame.opening, frame.opened, frame.ending, frame.ended
// each at most once and in that order. A moment that repeats one already
// recorded, or that arrives after a later stage of its frame, is dropped
// (the ledger is append-only); a stage that was skipped is recorded,
// marked inferred, right before the later one that implies it, when the
// adapter's manifest declares that event.

// frameStages are the frame events in causal order.
var frameStages = []contract.Event{
	contract.EventFrameOpening, contract.EventFrameOpened,
	contract.EventFrameEnding, contract.EventFrameEnded,
}

// frameStage returns ev's position in frameStages (1-based), or 0.
func frameStage(ev contract.Event) int {
	for i, e := range frameStages {
		if e == ev {
			return i + 1
		}
	}
	return 0
}

// coherence decides which moments reach the ledger, and in which order.
// Only the supervisor loop uses it.
type coherence struct {
	// declared are the frame events the manifest declares (support other
	// than unavailable); only these are inferred.
	declared map[contract.Event]bool
	// frames holds each frame's highest recorded stage.
	frames map[string]int
	// The current harness session's session.* moments so far.
	starting, started, ending, ended bool
}

// newCoherence returns the filter for a session of an adapter with
// manifest m recorded in integration mode mode.
func newCoherence(m contract.AdapterManifest, mode contract.IntegrationMode) *coherence {
	c := &coherence{declared: map[contract.Event]bool{}, frames: map[string]int{}}
	for _, ev := range frameStages {
		if s, ok := m.LifecycleEvents[ev]; ok && s.Support != contract.SupportUnavailable && s.Support != "" && slices.Contains(s.Modes, mode) {
			c.declared[ev] = true
		}
	}
	return c
}

// admit returns the moments to record for m, in order: none when m is
// dropped, else m preceded by the inferred stages of its frame it implies.
func (c *coherence) admit(m Moment) []Moment {
	switch m.Event {
	case contract.EventSessionStarting:
		c.starting, c.started, c.ending, c.ended = true, false, false, false
	case contract.EventSessionStarted:
		if c.started || c.ended {
			return nil
		}
		c.started = true
	case contract.EventSessionEnding:
		if c.ending || c.ended {
			return nil
		}
		c.ending = true
	case contract.EventSessionEnded:
		if c.ended {
			return nil
		}
		c.ended = true
	}
	k := frameStage(m.Event)
	if k == 0 || m.Frame == nil {
		return []Moment{m}
	}
	id := m.Frame.FrameID
	have := c.frames[id]
	if have >= k {
		return nil
	}
	c.frames[id] = k
	var out []Moment
	for j := have + 1; j < k; j++ {
		ev := frameStages[j-1]
		if c.declared[ev] {
			out = append(out, inferred(ev, m))
		}
	}
	return append(out, m)
}

// has reports whether the stream already tells frame moment m (or a
// later stage of its frame).
func (c *coherence) has(m Moment) bool {
	k := frameStage(m.Event)
	return k > 0 && m.Frame != nil && c.frames[m.Frame.FrameID] >= k
}

// inferred is stage ev of m's frame, implied by m.
func inferred(ev contract.Event, m Moment) Moment {
	fc := *m.Frame
	s := map[string]any{"source": "inferred", "inferred_from": string(m.Event), "frame_id": fc.FrameID}
	if fc.ParentFrameID != nil {
		s["parent_frame_id"] = *fc.ParentFrameID
	}
	return Moment{
		Event: ev, Frame: &fc, HarnessSessionID: m.HarnessSessionID,
		EventID: fc.FrameID + "/" + string(ev), Summary: s,
	}
}

// Coherent keeps the stream of a session recorded without a wrapper
// (native hooks, one process per call) coherent: seeded with the
// session's receipts so far, it admits new moments like the supervisor's.
type Coherent struct{ c *coherence }

// NewCoherent returns the filter for a session of an adapter with
// manifest m, recorded in integration mode mode, whose ledger holds prior.
func NewCoherent(m contract.AdapterManifest, mode contract.IntegrationMode, prior []contract.LifecycleReceipt) *Coherent {
	c := newCoherence(m, mode)
	for _, r := range prior {
		if hookCallFailed(r) {
			continue
		}
		mm := Moment{Event: r.Event}
		if id := priorFrameID(r); id != "" {
			mm.Frame = &contract.FrameContext{FrameID: id}
		}
		c.admit(mm)
	}
	return &Coherent{c}
}

// Admit returns the moments to record for m, in order (see coherence).
func (c *Coherent) Admit(m Moment) []Moment { return c.c.admit(m) }

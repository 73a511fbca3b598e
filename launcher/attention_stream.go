package launcher

import (
	"maps"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
)

// How attention travels in the stream (docs/contract.md, "Attention
// travels on ticks and frame ends"): every change of the tracker is a
// supervisor.tick recorded at once (trigger attention_changed), whose
// telemetry_summary carries the attention block with the episode the
// change closed; every other tick carries the same block while the
// tracker runs; a turn's frame.ended carries the turn's waiting, and
// session.ended the session's, with the episode its end closed.

// observeAttention folds f into the tracker; a change is recorded and
// announced. A fact that changes nothing records nothing. Times are
// whole milliseconds, as receipts carry them, so that an episode's
// duration_ms is exactly its end less its start.
func (s *supervisor) observeAttention(f attention.Fact) {
	f.At = f.At.Truncate(time.Millisecond)
	before := s.att.tracker.Current()
	if !s.att.tracker.Observe(f) {
		return
	}
	closed := closedBy(s.att.tracker, before)
	s.tickWith(tickAttentionChanged, closed)
	s.noticeChange(before, closed)
}

// closedBy returns the episode t's latest change ended, given the
// attention before it, or nil (none was open, or the change kept it:
// a more trusted source, a detail).
func closedBy(t *attention.Tracker, before attention.Attention) *attention.Episode {
	if before.Episode == 0 || t.Current().Episode == before.Episode {
		return nil
	}
	e := t.Episodes()[before.Episode-1]
	return &e
}

// attentionBlock adds the attention block to a tick's summary while a
// tracker runs; closed is the episode the change it records ended.
func (s *supervisor) attentionBlock(sum map[string]any, closed *attention.Episode) {
	if s.att.tracker == nil {
		return
	}
	sum[attention.BlockKey] = attention.BlockOf(s.att.tracker, s.cfg.Now(), closed).Map()
}

// attentionOnReceipt adds attention to a receipt the wrapper is about to
// record while a tracker runs: a turn's frame.ended carries that turn's
// waiting (TurnBlock); session.ended ends the tracker (nothing is known
// of a session that is gone) and carries the session's block, with the
// episode the end closed. A moment under an idempotency key (a client's,
// whose replay must match it) or one whose summary has the block already
// is left as it is.
func (s *supervisor) attentionOnReceipt(m Moment) Moment {
	t := s.att.tracker
	if t == nil || m.IdempotencyKey != nil {
		return m
	}
	if _, ok := m.Summary[attention.BlockKey]; ok {
		return m
	}
	now := s.cfg.Now()
	var block map[string]any
	switch {
	case m.Event == contract.EventFrameEnded && m.Frame != nil && isTurn(*m.Frame):
		s.attendKeys()
		block = attention.TurnBlockOf(t.Episodes(), t.Turn(), now).Map()
	case m.Event == contract.EventSessionEnded:
		before := t.Current()
		t.End(now.Truncate(time.Millisecond))
		closed := closedBy(t, before)
		block = attention.BlockOf(t, now, closed).Map()
		s.noticeChange(before, closed)
	default:
		return m
	}
	m.Summary = maps.Clone(m.Summary)
	if m.Summary == nil {
		m.Summary = map[string]any{}
	}
	m.Summary[attention.BlockKey] = block
	return m
}

package sessionview

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
)

func tick(seq uint64, at int64, summary map[string]any) contract.LifecycleReceipt {
	return contract.LifecycleReceipt{Event: contract.EventSupervisorTick, Sequence: &seq, AtEpochS: at, TelemetrySummary: summary}
}

// TestSummaryKeepsTheLatestAttention: the latest tick carrying a block is
// the session's attention; a tick without one, or a frame.ended's turn
// block, leaves it; an ended session shows none.
func TestSummaryKeepsTheLatestAttention(t *testing.T) {
	var s Summary
	s.Apply(tick(1, 100, map[string]any{"activity": "idle"}))
	if s.Attention != nil {
		t.Fatalf("attention from a tick without a block: %+v", s.Attention)
	}
	b := attention.Block{State: attention.NeedsPermission, Since: 99_500, Source: attention.SourceHook, Detail: "Bash", Episode: 1, Turn: 1,
		WaitedMs: map[attention.State]int64{attention.NeedsPermission: 1500}}
	s.Apply(tick(2, 101, map[string]any{attention.BlockKey: b.Map()}))
	s.Apply(tick(3, 102, map[string]any{"activity": "idle"}))
	seq := uint64(4)
	s.Apply(contract.LifecycleReceipt{Event: contract.EventFrameEnded, Sequence: &seq, AtEpochS: 103,
		TelemetrySummary: map[string]any{attention.BlockKey: attention.TurnBlock{WaitedMs: map[attention.State]int64{}, Episodes: 0}.Map()}})
	a := s.AttentionShown()
	if a == nil || a.State != attention.NeedsPermission || a.Detail != "Bash" || !a.At.Equal(time.Unix(101, 0)) {
		t.Fatalf("attention %+v, want the tick of sequence 2's", a)
	}
	if got := a.WaitedSeconds[attention.NeedsPermission]; got != 1.5 {
		t.Errorf("waited %v s, want 1.5", got)
	}
	if got := a.Stamp(time.UnixMilli(102_000)).ForSeconds; got != 2.5 {
		t.Errorf("for_seconds %v, want 2.5 (now − since)", got)
	}
	s.Terminal = true
	if s.AttentionShown() != nil {
		t.Error("an ended session shows attention")
	}
}

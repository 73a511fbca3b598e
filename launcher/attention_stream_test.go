package launcher

import (
	"fmt"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// attentionTicks returns the blocks of the attention_changed ticks
// recorded so far, in order.
func attentionTicks(t *testing.T, f *fixture) []attention.Block {
	t.Helper()
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	var out []attention.Block
	for _, m := range f.rec.moments {
		if m.Event != contract.EventSupervisorTick || m.Summary["trigger"] != tickAttentionChanged {
			continue
		}
		b, ok := attention.BlockFrom(m.Summary)
		if !ok {
			t.Fatalf("an attention_changed tick without an attention block: %v", m.Summary)
		}
		out = append(out, b)
	}
	return out
}

// waitAttentionTick waits for the n-th attention_changed tick and
// returns it.
func waitAttentionTick(t *testing.T, f *fixture, n int) attention.Block {
	t.Helper()
	testutil.WaitFor(t, func() bool { return len(attentionTicks(t, f)) >= n })
	return attentionTicks(t, f)[n-1]
}

// TestAttentionTravelsOnTicks: each change of a Claude session's
// attention is an attention_changed tick at once, carrying the block: the
// turn's start (working), the PermissionRequest hook (needs_permission
// from the hook about Bash, episode 1); the permission notification that
// follows changes nothing and records no tick; a key typed at the dialog
// is read by the regular activity check (no fact arrives) and records
// working with the closed episode and its duration; the turn's Stop
// records a frame.ended carrying the turn's waiting, then
// waiting_for_input; the session's end carries the session's waiting and
// the episode its end closed.
func TestAttentionTravelsOnTicks(t *testing.T) {
	f, ft := renewFixture(t)
	f.cfg.Tick = time.Hour // only the activity checks, every 200 ms, read the keys
	f.cfg.IdleAfter = 400 * time.Millisecond
	f.cfg.Grace = 50 * time.Millisecond
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	claudeHook(t, f, "UserPromptSubmit", `{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt_id":"p1","prompt":"go"}`)
	if b := waitAttentionTick(t, f, 1); b.State != attention.Working || b.Source != attention.SourceFrame || b.Turn != 1 || b.Closed != nil {
		t.Errorf("tick at the turn's start: %+v, want working from the frame in turn 1", b)
	}
	claudeHook(t, f, "PermissionRequest", `{"hook_event_name":"PermissionRequest","session_id":"s1","prompt_id":"p1","tool_name":"Bash","tool_input":{"command":"touch x"}}`)
	asked := waitAttentionTick(t, f, 2)
	if asked.State != attention.NeedsPermission || asked.Source != attention.SourceHook || asked.Evidence != "PermissionRequest" ||
		asked.Detail != "Bash" || asked.Episode != 1 || asked.Turn != 1 || asked.Closed != nil {
		t.Errorf("tick at the dialog: %+v, want needs_permission from the PermissionRequest hook about Bash, episode 1", asked)
	}
	claudeHook(t, f, "Notification", `{"hook_event_name":"Notification","session_id":"s1","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}`)
	time.Sleep(30 * time.Millisecond)
	ft.typeKey()
	answered := waitAttentionTick(t, f, 3)
	if n := len(attentionTicks(t, f)); n != 3 {
		t.Errorf("%d attention_changed ticks, want 3: the notification of the same dialog is no change", n)
	}
	c := answered.Closed
	if answered.State != attention.Working || answered.Source != attention.SourceFrame || answered.Episode != 0 || c == nil {
		t.Fatalf("tick at the answer: %+v, want working with the closed episode", answered)
	}
	if c.ID != 1 || c.Kind != attention.NeedsPermission || c.Detail != "Bash" || c.Start != asked.Since ||
		c.DurationMs != c.End-c.Start || c.DurationMs < 30 || answered.Since != c.End {
		t.Errorf("closed episode %+v (state since %d), want needs_permission 1 from %d, ended by the key, ≥ 30 ms", c, answered.Since, asked.Since)
	}
	if answered.WaitedMs[attention.NeedsPermission] != c.DurationMs {
		t.Errorf("waited %v, want needs_permission %d ms", answered.WaitedMs, c.DurationMs)
	}

	claudeHook(t, f, "Stop", `{"hook_event_name":"Stop","session_id":"s1","prompt_id":"p1"}`)
	ended, ok := f.rec.last(contract.EventFrameEnded)
	if !ok {
		t.Fatalf("no frame.ended after Stop: %v", f.rec.events())
	}
	tb, ok := attention.TurnBlockFrom(ended.Summary)
	if !ok || tb.Episodes != 1 || tb.WaitedMs[attention.NeedsPermission] != c.DurationMs || len(tb.WaitedMs) != 1 {
		t.Errorf("frame.ended's attention %+v (%v), want the turn's one needs_permission episode of %d ms", tb, ended.Summary[attention.BlockKey], c.DurationMs)
	}
	if b := waitAttentionTick(t, f, 4); b.State != attention.WaitingForInput || b.Episode != 2 || b.Closed != nil {
		t.Errorf("tick at the turn's end: %+v, want waiting_for_input, episode 2", b)
	}
	if i := indexOf(f.rec.events(), contract.EventFrameEnded); i < 0 || f.rec.events()[i+1] != contract.EventSupervisorTick {
		t.Errorf("the turn's end tick does not follow its frame.ended: %v", f.rec.events())
	}

	endSession(ft, done)
	end, _ := f.rec.last(contract.EventSessionEnded)
	b, ok := attention.BlockFrom(end.Summary)
	if !ok || b.State != attention.Unknown || b.Closed == nil || b.Closed.ID != 2 || b.Closed.Kind != attention.WaitingForInput ||
		b.WaitedMs[attention.NeedsPermission] != c.DurationMs || b.WaitedMs[attention.WaitingForInput] != b.Closed.DurationMs {
		t.Errorf("session.ended's attention %+v, want unknown, closing waiting_for_input 2, the session's waiting", b)
	}
	if n := len(attentionTicks(t, f)); n != 4 {
		t.Errorf("%d attention_changed ticks, want 4 (the session's end is told by session.ended)", n)
	}
}

// TestAttentionOnEveryTick: while a session's attention is tracked, the
// interval and activity ticks carry the same block as the change that
// set it, up to the tick.
func TestAttentionOnEveryTick(t *testing.T) {
	f, ft, done := turnFixture(t) // ticks every 50 ms
	claudeHook(t, f, "PermissionRequest", `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash"}`)
	asked := waitAttentionTick(t, f, 1)
	n := len(f.rec.events())
	testutil.WaitFor(t, func() bool { return countEvents(f.rec.events()[n:], contract.EventSupervisorTick) >= 2 })
	endSession(ft, done)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	seen := 0
	for _, m := range f.rec.moments[n:] {
		if m.Event != contract.EventSupervisorTick {
			continue
		}
		seen++
		b, ok := attention.BlockFrom(m.Summary)
		if !ok || b.State != asked.State || b.Since != asked.Since || b.Episode != asked.Episode || b.Closed != nil ||
			b.WaitedMs[attention.NeedsPermission] < asked.WaitedMs[attention.NeedsPermission] {
			t.Errorf("%s tick's attention %+v, want the open episode of %+v", m.Summary["trigger"], b, asked)
		}
	}
	if seen < 2 {
		t.Errorf("%d ticks after the change, want ≥ 2", seen)
	}
}

// TestNoAttentionWithoutReader: a session whose harness's signals tell
// nothing of attention (no adapters.AttentionReader) records no
// attention anywhere: no attention_changed tick, no block on a tick, a
// frame.ended or session.ended.
func TestNoAttentionWithoutReader(t *testing.T) {
	f, ft := renewFixture(t)
	f.cfg.Adapter, f.cfg.Record.AdapterID = nil, "generic"
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	frame(t, f, contract.EventFrameOpening, "f1")
	frame(t, f, contract.EventFrameEnded, "f1")
	ft.typeKey()
	testutil.WaitFor(t, func() bool { return countEvents(f.rec.events(), contract.EventSupervisorTick) >= 2 })
	endSession(ft, done)
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	for _, m := range f.rec.moments {
		if _, ok := m.Summary[attention.BlockKey]; ok || m.Summary["trigger"] == tickAttentionChanged {
			t.Errorf("%s carries attention without a reader: %v", m.Event, m.Summary)
		}
	}
}

// TestEmittedFrameEndedKeepsItsKey: a frame.ended a client emits under
// an idempotency key is recorded as the client sent it (its replay must
// match it), without the turn's attention.
func TestEmittedFrameEndedKeepsItsKey(t *testing.T) {
	s := &supervisor{cfg: Config{Now: time.Now}}
	s.att.tracker = attention.NewTracker(time.Now())
	k := "k1"
	m := Moment{Event: contract.EventFrameEnded, Frame: &contract.FrameContext{FrameID: "f1", FrameClass: contract.FrameTopLevel}}
	if got := s.attentionOnReceipt(m); got.Summary[attention.BlockKey] == nil {
		t.Errorf("a wrapper-recorded frame.ended without the turn's attention: %v", got.Summary)
	}
	m.IdempotencyKey = &k
	if got := s.attentionOnReceipt(m); got.Summary != nil {
		t.Errorf("an emitted frame.ended under a key got %v, want its summary untouched", got.Summary)
	}
}

func indexOf(es []contract.Event, e contract.Event) int {
	for i, x := range es {
		if x == e {
			return i
		}
	}
	return -1
}

// TestEmitAnsweredWithItsOwnReceipt: a moment a client emits answers
// with its own receipt, not with the attention_changed tick its
// recording causes (recorded right after it, inside the same step).
func TestEmitAnsweredWithItsOwnReceipt(t *testing.T) {
	f, ft, done := turnFixture(t)
	defer endSession(ft, done)
	for _, ev := range []contract.Event{contract.EventFrameOpening, contract.EventFrameEnded} {
		var r struct {
			Event     contract.Event `json:"event"`
			ReceiptID string         `json:"receipt_id"`
		}
		if err := callCtl(t, f, control.OpEmit, control.EmitArgs{Event: ev, FrameID: "f1"}, &r); err != nil {
			t.Fatal(err)
		}
		es := f.rec.events()
		at := indexOf(es, ev)
		if r.Event != ev || at < 0 || r.ReceiptID != fmt.Sprintf("lfr_%d", at+1) || at+1 >= len(es) || es[at+1] != contract.EventSupervisorTick {
			t.Errorf("emit %s answered %s %s; recorded %v: want its own receipt, the tick after it", ev, r.Event, r.ReceiptID, es)
		}
	}
}

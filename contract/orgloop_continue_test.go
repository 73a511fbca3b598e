package contract

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestOrgLoopContinuedSessionIncarnations: a session whose wrapper was
// lost (its sealed end), continued by `run --continue-session` (its
// receipts carry continuation 1), renewed there once and ended, projects
// into OrgLoop events where every incarnation — every session part of a
// dedupe key — has exactly one start and one end, in that order; before
// issue 51 the continuation's start repeated the first start's key (a
// deduping consumer dropped it) and its end was a second end of the
// first incarnation.
func TestOrgLoopContinuedSessionIncarnations(t *testing.T) {
	const id = "ses_01KAQ3M4T9J6H2C8D4F0G1K3M5"
	renewal := func(step string) map[string]any {
		return map[string]any{SummaryReason: StoppedByRenewal, "renewal_attempt": 1, "renewal_step": step, SummaryContinuation: 1}
	}
	ended := func(phase, outcome, reason string, extra map[string]any) map[string]any {
		m := map[string]any{SummaryPhase: phase, SummaryOutcome: outcome, SummaryReason: reason}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	story := []struct {
		ev  Event
		sum map[string]any
	}{
		{EventSessionStarting, nil},
		{EventSessionStarted, nil},
		{EventSessionEnded, ended("stopped", "unknown", "wrapper_lost", nil)},
		{EventSessionStarting, map[string]any{SummaryContinuation: 1}},
		{EventSessionStarted, map[string]any{SummaryContinuation: 1}},
		{EventSessionEnding, renewal("ending")},
		{EventSessionEnded, ended("stopped", "cancelled", StoppedByRenewal, renewal("ended"))},
		{EventSessionStarting, renewal("starting")},
		{EventSessionStarted, renewal("started")},
		{EventSessionEnded, ended("completed", "success", "exit_code_0", map[string]any{SummaryContinuation: 1})},
	}
	type life struct{ starts, ends int }
	lives := map[string]*life{}
	var order []string
	for i, s := range story {
		r := LifecycleReceipt{ReceiptID: fmt.Sprintf("lfr_%d", i), Event: s.ev, Status: StatusObserved, AdapterID: "claude",
			AtEpochS: 1778100000 + int64(i), TelemetrySummary: s.sum}
		ev, err := ProjectOrgLoop(r, OrgLoopOptions{SessionID: id, Harness: "claude-code"})
		if err == ErrNoOrgLoopPhase {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(ev)
		if err := CheckOrgLoopJSON(b); err != nil {
			t.Errorf("receipt %d: %v", i, err)
		}
		lc := ev.Payload.Lifecycle
		order = append(order, lc.DedupeKey)
		inc := OrgLoopIncarnation(r, id)
		l := lives[inc]
		if l == nil {
			l = &life{}
			lives[inc] = l
		}
		if lc.Terminal {
			l.ends++
		} else if lc.Phase == PhaseStarted {
			l.starts++
		}
	}
	want := []string{
		"claude-code:" + id + ":started", "claude-code:" + id + ":stopped",
		"claude-code:" + id + ".c1:started", "claude-code:" + id + ".r1:stopped", "claude-code:" + id + ".r1:started",
		"claude-code:" + id + ".c1:completed",
	}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("dedupe keys\n got %v\nwant %v", order, want)
	}
	for inc, l := range lives {
		if l.starts != 1 || l.ends != 1 {
			t.Errorf("incarnation %s: %d starts and %d ends, want 1 and 1", inc, l.starts, l.ends)
		}
	}
}

// TestOrgLoopWrapperLostInsideARenewal: a wrapper lost after renewal 1
// recorded its harness's stop and its relaunch's session.starting is
// sealed with renewal_interrupted 1; the continuation that finishes the
// renewal (continuation 0: no incarnation ended) posts the renewal's
// start and the session's end. Every incarnation has one start and one
// end, as for a renewal never interrupted; before, the sealed end was a
// second end of the session's first start.
func TestOrgLoopWrapperLostInsideARenewal(t *testing.T) {
	const id = "ses_01KAQ3M4T9J6H2C8D4F0G1K3M5"
	renewal := func(step string, extra map[string]any) map[string]any {
		m := map[string]any{SummaryReason: StoppedByRenewal, "renewal_attempt": 1, "renewal_step": step}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	story := []struct {
		ev  Event
		sum map[string]any
	}{
		{EventSessionStarting, nil},
		{EventSessionStarted, nil},
		{EventSessionEnding, renewal("ending", nil)},
		{EventSessionEnded, renewal("ended", map[string]any{SummaryPhase: "stopped", SummaryOutcome: "cancelled"})},
		{EventSessionStarting, renewal("starting", nil)},
		{EventSessionEnded, map[string]any{SummaryPhase: "stopped", SummaryOutcome: "unknown", SummaryReason: "wrapper_lost", "renewal_interrupted": 1}},
		{EventSessionStarted, renewal("started", map[string]any{"renewal_recovered": true})},
		{EventSessionEnded, map[string]any{SummaryPhase: "completed", SummaryOutcome: "success", SummaryReason: "exit_code_0"}},
	}
	var keys []string
	for i, s := range story {
		r := LifecycleReceipt{ReceiptID: fmt.Sprintf("lfr_%d", i), Event: s.ev, Status: StatusObserved, AdapterID: "claude",
			AtEpochS: 1778100000 + int64(i), TelemetrySummary: s.sum}
		ev, err := ProjectOrgLoop(r, OrgLoopOptions{SessionID: id, Harness: "claude-code"})
		if err == ErrNoOrgLoopPhase {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ev.Payload.Lifecycle.DedupeKey)
	}
	want := []string{
		"claude-code:" + id + ":started", "claude-code:" + id + ".r1:stopped",
		"claude-code:" + id + ".r1:started", "claude-code:" + id + ":completed",
	}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Errorf("dedupe keys\n got %v\nwant %v", keys, want)
	}
}

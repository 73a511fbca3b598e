package autorenew

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/renewal"
)

func TestBelowOrUnknownPressureWaits(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.wait(at(time.Second), time.Time{})
	f.turn("a", at(1*time.Second), at(5*time.Second))
	f.wait(at(10*time.Second), time.Time{})
	f.pressure(at(5*time.Second), 69.9)
	d := f.wait(at(10*time.Second), time.Time{})
	if d.Waiting != "pressure 69.9 % < 70 %" {
		t.Fatalf("Waiting = %q", d.Waiting)
	}
}

func TestRenewsAfterTheTurnEndedAndSettled(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(10*time.Second))
	f.pressure(at(10*time.Second), 71.2)
	f.wait(at(10*time.Second), at(12*time.Second))
	f.wait(at(11*time.Second+999*time.Millisecond), at(12*time.Second))
	d := f.next(at(12*time.Second), Renew)
	want := renewal.Policy{Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.2, TriggerTokens: 71200, Window: 100000, ThisHour: 1, PerHour: 3}
	if d.Evidence != want {
		t.Fatalf("evidence %+v, want %+v", d.Evidence, want)
	}
	if d.Resume {
		t.Fatal("a fresh renewal is the default; Renew said resume")
	}
	// Asked and unanswered: nothing more.
	f.wait(at(13*time.Second), time.Time{})
	f.p.Answered(at(20*time.Second), Renewed)
	// Renewed but the stream does not show it yet: still nothing.
	f.wait(at(21*time.Second), time.Time{})
	f.renewal(at(15*time.Second), true)
	if got := f.p.ThisHour(at(21 * time.Second)); got != 1 {
		t.Fatalf("ThisHour = %d, want 1", got)
	}
	// The new conversation: pressure unknown again.
	f.wait(at(21*time.Second), time.Time{})
}

func TestResumeFromConfig(t *testing.T) {
	c := cfg70()
	c.Resume = true
	f := newFake(t, c)
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 90)
	if d := f.next(at(time.Minute), Renew); !d.Resume {
		t.Fatal("Config.Resume set; Renew did not say resume")
	}
}

func TestTokenThreshold(t *testing.T) {
	f := newFake(t, Defaults(Threshold{Tokens: 150000}))
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.see(receipt(contract.EventContextPressureObserved, at(2*time.Second), map[string]any{"tokens": float64(149999), "window": float64(200000)}))
	f.wait(at(time.Minute), time.Time{})
	f.turn("b", at(61*time.Second), at(62*time.Second))
	f.see(receipt(contract.EventContextPressureObserved, at(62*time.Second), map[string]any{"tokens": float64(150000), "window": float64(200000)}))
	d := f.next(at(2*time.Minute), Renew)
	if d.Evidence.ThresholdTokens != 150000 || d.Evidence.TriggerTokens != 150000 || d.Evidence.TriggerPercent != 75 || d.Evidence.ThresholdPercent != 0 {
		t.Fatalf("evidence %+v", d.Evidence)
	}
}

func TestPercentFromTokensAndWindow(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.see(receipt(contract.EventContextPressureObserved, at(2*time.Second), map[string]any{"tokens": float64(140000), "window": float64(200000)}))
	d := f.next(at(time.Minute), Renew)
	if d.Evidence.TriggerPercent != 70 {
		t.Fatalf("trigger percent %v, want 70", d.Evidence.TriggerPercent)
	}
	// A reading that says nothing of the threshold is ignored.
	g := newFake(t, cfg70())
	g.started(at(0))
	g.turn("a", at(1*time.Second), at(2*time.Second))
	g.see(receipt(contract.EventContextPressureObserved, at(2*time.Second), map[string]any{"tokens": float64(140000)}))
	g.wait(at(time.Minute), time.Time{})
}

func TestNoRenewalWhileAFrameIsOpen(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(10*time.Second))
	f.openFrame("b", at(11*time.Second))
	f.pressure(at(12*time.Second), 75) // a reading mid-turn
	deadline := at(12*time.Second + 30*time.Minute)
	d := f.wait(at(20*time.Second), deadline)
	if !strings.Contains(d.Waiting, "waiting for the turn to end") {
		t.Fatalf("Waiting = %q", d.Waiting)
	}
	f.wait(at(10*time.Minute), deadline)
	f.endFrame("b", at(11*time.Minute))
	f.wait(at(11*time.Minute), at(11*time.Minute+2*time.Second))
	f.next(at(11*time.Minute+2*time.Second), Renew)
}

func TestSubcallFramesAndFramesWithoutIDs(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 80)
	// A subcall frame that opens and never ends does not block.
	f.see(receipt(contract.EventFrameOpening, at(3*time.Second), map[string]any{"frame_id": "sub", "parent_frame_id": "a"}))
	f.next(at(5*time.Second), Renew)

	g := newFake(t, cfg70())
	g.started(at(0))
	g.see(receipt(contract.EventFrameOpening, at(1*time.Second), nil))
	g.pressure(at(2*time.Second), 80)
	g.wait(at(3*time.Second), at(2*time.Second+30*time.Minute))
	g.see(receipt(contract.EventFrameEnded, at(4*time.Second), map[string]any{"frame_id": "x"}))
	g.next(at(6*time.Second), Renew)

	h := newFake(t, cfg70())
	h.started(at(0))
	h.openFrame("p", at(1*time.Second))
	h.openFrame("q", at(1*time.Second))
	h.pressure(at(2*time.Second), 80)
	h.see(receipt(contract.EventFrameEnded, at(4*time.Second), nil)) // no id: every open frame ended
	h.next(at(6*time.Second), Renew)
}

func TestNoFrameEndedInThisConversation(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.pressure(at(1*time.Second), 80) // e.g. a reading of a resumed transcript
	d := f.wait(at(time.Minute), at(1*time.Second+30*time.Minute))
	if !strings.Contains(d.Waiting, "waiting for a turn to end") {
		t.Fatalf("Waiting = %q", d.Waiting)
	}
	f.turn("a", at(2*time.Minute), at(3*time.Minute))
	f.next(at(3*time.Minute+2*time.Second), Renew)
}

func TestNoSafeMomentGivesUpOnceAtWaitMax(t *testing.T) {
	c := cfg70()
	c.WaitMax = 10 * time.Minute
	f := newFake(t, c)
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.openFrame("b", at(3*time.Second))
	f.pressure(at(4*time.Second), 85)
	f.wait(at(5*time.Second), at(4*time.Second+10*time.Minute))
	r := f.record(at(4*time.Second+10*time.Minute), ReasonNoSafeMoment)
	if r.Evidence.TriggerPercent != 85 || r.Evidence.Client != renewal.PolicyClientID {
		t.Fatalf("report evidence %+v", r.Evidence)
	}
	if !strings.Contains(r.Detail, "within 10m of the pressure crossing 70 %") {
		t.Fatalf("detail %q", r.Detail)
	}
	// Given up for this crossing, even at a safe moment now.
	f.endFrame("b", at(11*time.Minute))
	f.pressure(at(11*time.Minute), 86)
	f.wait(at(12*time.Minute), time.Time{})
	// Below, then over again: a new crossing.
	f.turn("c", at(13*time.Minute), at(14*time.Minute))
	f.pressure(at(14*time.Minute), 60) // e.g. the harness compacted
	f.wait(at(14*time.Minute), time.Time{})
	f.turn("d", at(15*time.Minute), at(16*time.Minute))
	f.pressure(at(16*time.Minute), 72)
	f.next(at(16*time.Minute+2*time.Second), Renew)
}

func TestNotNowWaitsForTheNextTurnToEnd(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(10*time.Second))
	f.pressure(at(10*time.Second), 75)
	f.next(at(12*time.Second), Renew)
	f.p.Answered(at(12*time.Second), NotNow) // keys typed since the turn ended
	deadline := at(10*time.Second + 30*time.Minute)
	d := f.wait(at(13*time.Second), deadline)
	if !strings.Contains(d.Waiting, "not between turns") {
		t.Fatalf("Waiting = %q", d.Waiting)
	}
	f.wait(at(5*time.Minute), deadline) // no new turn: never asks
	// A frame.ended the stream shows late, recorded before the refusal, is
	// not a new turn.
	f.endFrame("a", at(10*time.Second))
	f.wait(at(5*time.Minute), deadline)
	f.openFrame("b", at(6*time.Minute))
	f.wait(at(6*time.Minute), deadline)
	f.endFrame("b", at(7*time.Minute))
	f.pressure(at(7*time.Minute), 77)
	f.wait(at(7*time.Minute), at(7*time.Minute+2*time.Second))
	d = f.next(at(7*time.Minute+2*time.Second), Renew)
	if d.Evidence.TriggerPercent != 77 {
		t.Fatalf("trigger %v, want the latest reading 77", d.Evidence.TriggerPercent)
	}
	if d.Evidence.ThisHour != 1 {
		t.Fatalf("a NotNow counted: ThisHour %d", d.Evidence.ThisHour)
	}
}

func TestBusyRetriesThenMachineLimit(t *testing.T) {
	c := cfg70()
	c.WaitMax = time.Minute
	f := newFake(t, c)
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 75)
	f.next(at(4*time.Second), Renew)
	f.p.Answered(at(4*time.Second), Busy)
	f.wait(at(5*time.Second), at(9*time.Second))
	f.next(at(9*time.Second), Renew)
	f.p.Answered(at(9*time.Second), Busy)
	f.wait(at(9*time.Second), at(14*time.Second))
	f.next(at(61*time.Second), Renew)
	f.p.Answered(at(62*time.Second), Busy) // WaitMax after the crossing at 2 s
	r := f.record(at(62*time.Second), ReasonMachineLimit)
	if !strings.Contains(r.Detail, "no renewal slot free on this machine within 1m") {
		t.Fatalf("detail %q", r.Detail)
	}
	f.wait(at(63*time.Second), time.Time{})
	f.wait(at(10*time.Minute), time.Time{})
	if n := f.p.ThisHour(at(10 * time.Minute)); n != 0 {
		t.Fatalf("Busy counted: ThisHour %d", n)
	}
}

func TestPerHourIsASlidingHour(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	// Three policy renewals, at 0, 10 and 20 min (the futile guard sees
	// low first readings).
	for i, m := range []time.Duration{0, 10, 20} {
		start := at(m * time.Minute)
		f.renewal(start, true)
		f.turn(string(rune('a'+i)), start.Add(time.Second), start.Add(2*time.Second))
		f.pressure(start.Add(2*time.Second), 20)
	}
	f.turn("z", at(30*time.Minute), at(31*time.Minute))
	f.pressure(at(31*time.Minute), 80)
	r := f.record(at(31*time.Minute+5*time.Second), ReasonSessionLimit)
	if r.Evidence.ThisHour != 3 || r.Evidence.PerHour != 3 {
		t.Fatalf("evidence %+v", r.Evidence)
	}
	if !strings.Contains(r.Detail, "3 policy renewals in the last hour already (limit 3)") {
		t.Fatalf("detail %q", r.Detail)
	}
	// Once per crossing: then wait until the oldest (at 0) leaves the hour.
	f.wait(at(32*time.Minute), at(60*time.Minute))
	f.wait(at(59*time.Minute), at(60*time.Minute))
	d := f.next(at(60*time.Minute), Renew)
	if d.Evidence.ThisHour != 3 {
		t.Fatalf("ThisHour %d, want 3 (10 and 20 min, and this one)", d.Evidence.ThisHour)
	}
}

func TestPersonsRenewalsDoNotCount(t *testing.T) {
	c := cfg70()
	c.PerHour = 1
	f := newFake(t, c)
	f.started(at(0))
	f.renewal(at(1*time.Minute), false)
	f.renewal(at(2*time.Minute), false)
	f.turn("a", at(3*time.Minute), at(4*time.Minute))
	f.pressure(at(4*time.Minute), 80)
	f.next(at(5*time.Minute), Renew)
}

func TestFutileGuard(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 75)
	f.next(at(4*time.Second), Renew)
	f.renewal(at(5*time.Second), true)
	f.p.Answered(at(9*time.Second), Renewed)
	f.turn("b", at(10*time.Second), at(20*time.Second))
	f.pressure(at(20*time.Second), 60) // within 10 points of 70
	r := f.record(at(21*time.Second), ReasonFutile)
	want := "the new conversation started at 60 % of the window, within 10 points of the 70 % threshold: not renewing again"
	if r.Detail != want {
		t.Fatalf("detail %q, want %q", r.Detail, want)
	}
	// Stopped for this conversation, over the threshold too.
	f.turn("c", at(30*time.Second), at(40*time.Second))
	f.pressure(at(40*time.Second), 90)
	f.wait(at(time.Minute), time.Time{})
	f.wait(at(time.Hour), time.Time{})
	// A person's renewal starts a conversation the policy did not: it
	// renews again.
	f.renewal(at(2*time.Hour), false)
	f.turn("d", at(2*time.Hour+time.Second), at(2*time.Hour+2*time.Second))
	f.pressure(at(2*time.Hour+2*time.Second), 90)
	f.next(at(2*time.Hour+4*time.Second), Renew)
}

func TestFutileGuardPassesALowFirstReading(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.renewal(at(1*time.Second), true)
	f.turn("a", at(2*time.Second), at(3*time.Second))
	f.pressure(at(3*time.Second), 59.9)
	f.wait(at(5*time.Second), time.Time{})
	// Only the first reading is checked.
	f.turn("b", at(6*time.Second), at(7*time.Second))
	f.pressure(at(7*time.Second), 71)
	f.next(at(9*time.Second), Renew)
}

func TestFutileGuardOnlyAfterPolicyRenewals(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.renewal(at(1*time.Second), false)
	f.turn("a", at(2*time.Second), at(3*time.Second))
	f.pressure(at(3*time.Second), 75)
	f.next(at(5*time.Second), Renew)
}

func TestFutileGuardInTokens(t *testing.T) {
	f := newFake(t, Defaults(Threshold{Tokens: 150000}))
	f.started(at(0))
	f.renewal(at(1*time.Second), true)
	f.turn("a", at(2*time.Second), at(3*time.Second))
	f.see(receipt(contract.EventContextPressureObserved, at(3*time.Second), map[string]any{"tokens": float64(135000)}))
	r := f.record(at(4*time.Second), ReasonFutile)
	if !strings.Contains(r.Detail, "135000 tokens, within 10 % (15000 tokens) of the 150000-token threshold") {
		t.Fatalf("detail %q", r.Detail)
	}
	g := newFake(t, Defaults(Threshold{Tokens: 150000}))
	g.started(at(0))
	g.renewal(at(1*time.Second), true)
	g.turn("a", at(2*time.Second), at(3*time.Second))
	g.see(receipt(contract.EventContextPressureObserved, at(3*time.Second), map[string]any{"tokens": float64(134999)}))
	g.wait(at(4*time.Second), time.Time{})
}

func TestFutileGuardNotArmedByAFallback(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	ren := func(ev contract.Event, step string) contract.LifecycleReceipt {
		return receipt(ev, at(time.Second), map[string]any{"reason": "renewal", "renewal_step": step, "policy": map[string]any{"client": "x"}})
	}
	f.see(ren(contract.EventSessionEnding, "ending"), ren(contract.EventSessionEnded, "ended"), ren(contract.EventSessionStarting, "starting"),
		ren(contract.EventSessionEnded, "relaunch_failed"), ren(contract.EventSessionStarting, "fallback_starting"), ren(contract.EventSessionStarted, "fallback_started"))
	if f.p.ended {
		t.Fatal("a renewal's session.ended ended the policy")
	}
	if n := f.p.ThisHour(at(time.Minute)); n != 1 {
		t.Fatalf("ThisHour %d, want 1 (another client's policy renewal)", n)
	}
	f.turn("a", at(2*time.Second), at(3*time.Second))
	f.pressure(at(3*time.Second), 71)
	f.next(at(5*time.Second), Renew)
}

func TestFailedCountsOnceAndIsNotRetriedThisCrossing(t *testing.T) {
	for _, streamFirst := range []bool{true, false} {
		name := "answer first"
		if streamFirst {
			name = "stream first"
		}
		t.Run(name, func(t *testing.T) {
			f := newFake(t, cfg70())
			f.started(at(0))
			f.turn("a", at(1*time.Second), at(2*time.Second))
			f.pressure(at(2*time.Second), 75)
			f.next(at(4*time.Second), Renew)
			failedRenewal := func() {
				s := map[string]any{"reason": "renewal", "renewal_step": "ending", "policy": map[string]any{"client": renewal.PolicyClientID}}
				f.see(receipt(contract.EventSessionEnding, at(4*time.Second), s))
				f.see(receipt(contract.EventSessionStarting, at(5*time.Second), map[string]any{"reason": "renewal", "renewal_step": "starting"}))
				failed := receipt(contract.EventSessionStarted, at(6*time.Second), map[string]any{"reason": "renewal", "renewal_step": "started"})
				failed.Status = contract.StatusFailed
				f.see(failed)
			}
			if streamFirst {
				failedRenewal()
			}
			f.p.Answered(at(6*time.Second), Failed)
			r := f.record(at(6*time.Second), ReasonRefused)
			if r.Evidence.ThisHour != 1 {
				t.Fatalf("report ThisHour %d, want 1", r.Evidence.ThisHour)
			}
			if !streamFirst {
				failedRenewal()
			}
			if n := f.p.ThisHour(at(time.Minute)); n != 1 {
				t.Fatalf("ThisHour %d, want 1: one failed renewal", n)
			}
		})
	}
}

func TestFailedWithoutReceiptsIsNotRetriedThisCrossing(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 75)
	f.next(at(4*time.Second), Renew)
	f.p.Answered(at(5*time.Second), Failed) // e.g. placement unavailable
	r := f.record(at(5*time.Second), ReasonRefused)
	if !strings.Contains(r.Detail, "asked at 75 % was refused or failed") {
		t.Fatalf("detail %q", r.Detail)
	}
	f.turn("b", at(10*time.Second), at(20*time.Second))
	f.pressure(at(20*time.Second), 78)
	f.wait(at(time.Minute), time.Time{})
	if n := f.p.ThisHour(at(time.Minute)); n != 1 {
		t.Fatalf("ThisHour %d, want 1", n)
	}
	f.turn("c", at(2*time.Minute), at(3*time.Minute))
	f.pressure(at(3*time.Minute), 50)
	f.turn("d", at(4*time.Minute), at(5*time.Minute))
	f.pressure(at(5*time.Minute), 71)
	d := f.next(at(6*time.Minute), Renew)
	if d.Evidence.ThisHour != 2 {
		t.Fatalf("ThisHour %d, want 2", d.Evidence.ThisHour)
	}
}

func TestRenewalRunningWaits(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 90)
	f.see(receipt(contract.EventSessionEnding, at(3*time.Second), map[string]any{"reason": "renewal"}))
	d := f.wait(at(time.Minute), time.Time{})
	if d.Waiting != "a renewal is running" {
		t.Fatalf("Waiting %q", d.Waiting)
	}
}

func TestCompactionForgetsThePressure(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 90)
	f.see(receipt(contract.EventContextCompacted, at(3*time.Second), nil))
	f.wait(at(time.Minute), time.Time{})
}

func TestDone(t *testing.T) {
	for _, ev := range []contract.Event{contract.EventSessionEnding, contract.EventSessionEnded} {
		f := newFake(t, cfg70())
		f.started(at(0))
		f.turn("a", at(1*time.Second), at(2*time.Second))
		f.pressure(at(2*time.Second), 90)
		f.see(receipt(ev, at(3*time.Second), map[string]any{"reason": "sigterm"}))
		f.next(at(4*time.Second), Done)
		f.pressure(at(5*time.Second), 95)
		f.next(at(6*time.Second), Done)
	}
}

func TestRecordedOnceUntilReported(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.openFrame("a", at(1*time.Second))
	f.pressure(at(2*time.Second), 90)
	late := at(2*time.Second + 30*time.Minute)
	f.next(late, Record)
	f.next(late.Add(time.Second), Record) // not Reported yet: the same report
	f.p.Reported(late)
	f.wait(late.Add(2*time.Second), time.Time{})
}

func TestReportMap(t *testing.T) {
	r := Report{Reason: ReasonFutile, Detail: "d", Evidence: renewal.Policy{Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 68, PerHour: 3}}
	m := r.Map()
	want := map[string]any{"client": "lifeloop-autorenew", "threshold_percent": 70.0, "trigger_percent": 68.0, "per_hour": 3, "decision": "gave_up", "reason": "futile", "detail": "d"}
	if len(m) != len(want) {
		t.Fatalf("Map() = %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Fatalf("Map()[%q] = %v, want %v", k, m[k], v)
		}
	}
	fb := Report{Reason: ReasonHandoffFailed, Detail: "the handoff command exited 1"}.Map()
	if fb["decision"] != "fallback" || fb["reason"] != "handoff_failed" || fb["client"] != renewal.PolicyClientID {
		t.Fatalf("handoff_failed Map() = %v", fb)
	}
}

// reportReceipt is the capability.degraded a runner records for r.
func reportReceipt(when time.Time, r Report) contract.LifecycleReceipt {
	return receipt(contract.EventCapabilityDegraded, when, map[string]any{"policy": r.Map()})
}

func TestReportsOfAnEarlierRunAreNotRecordedAgain(t *testing.T) {
	build := func(f *fake) {
		f.started(at(0))
		f.openFrame("a", at(1*time.Second))
		f.pressure(at(2*time.Second), 90)
	}
	late := at(2*time.Second + 30*time.Minute)
	first := newFake(t, cfg70())
	build(first)
	r := first.record(late, ReasonNoSafeMoment)

	// The client restarts and reads the ledger again, its report included.
	again := newFake(t, cfg70())
	build(again)
	again.see(reportReceipt(late, r))
	again.wait(late.Add(time.Minute), time.Time{})

	// Live: the report this Policy recorded shows in the stream later; a
	// newer pending report of the same reason stays.
	live := newFake(t, cfg70())
	live.started(at(0))
	live.turn("a", at(1*time.Second), at(2*time.Second))
	live.pressure(at(2*time.Second), 75)
	live.next(at(4*time.Second), Renew)
	live.p.Answered(at(5*time.Second), Failed)
	r1 := live.record(at(5*time.Second), ReasonRefused)
	live.turn("b", at(6*time.Second), at(7*time.Second))
	live.pressure(at(7*time.Second), 50)
	live.turn("c", at(8*time.Second), at(9*time.Second))
	live.pressure(at(9*time.Second), 80)
	live.next(at(12*time.Second), Renew)
	live.p.Answered(at(13*time.Second), Failed)
	live.see(reportReceipt(at(5*time.Second), r1))
	live.record(at(14*time.Second), ReasonRefused)
	// Another client's reports are not the policy's.
	other := newFake(t, cfg70())
	build(other)
	alien := r
	alien.Evidence.Client = "someone-else"
	other.see(reportReceipt(late, alien))
	other.record(late, ReasonNoSafeMoment)
}

func TestFrameEndingIsNotYetBetweenTurns(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.openFrame("b", at(10*time.Second))
	f.pressure(at(11*time.Second), 80)
	f.see(receipt(contract.EventFrameEnding, at(12*time.Second), map[string]any{"frame_id": "b"}))
	f.wait(at(20*time.Second), at(11*time.Second+30*time.Minute))
	f.endFrame("b", at(21*time.Second))
	f.wait(at(21*time.Second), at(23*time.Second))
	f.next(at(23*time.Second), Renew)
}

func TestNames(t *testing.T) {
	for a, want := range map[Action]string{Wait: "wait", Renew: "renew", Record: "record", Done: "done"} {
		if a.String() != want {
			t.Errorf("%d.String() = %q, want %q", a, a.String(), want)
		}
	}
	for r, want := range map[Result]string{Renewed: "renewed", NotNow: "not_now", Busy: "busy", Failed: "failed"} {
		if r.String() != want {
			t.Errorf("%d.String() = %q, want %q", r, r.String(), want)
		}
	}
	for d, want := range map[time.Duration]string{30 * time.Minute: "30m", 2 * time.Second: "2s", time.Hour: "1h", 90 * time.Second: "1m30s"} {
		if got := duration(d); got != want {
			t.Errorf("duration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestWaitingSaysWhatThePolicyWaitsFor(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 71)
	f.openFrame("b", at(3*time.Second))
	if d := f.wait(at(4*time.Second), at(2*time.Second+30*time.Minute)); d.Waiting != "pressure 71 % ≥ 70 %: waiting for the turn to end" {
		t.Fatalf("Waiting %q", d.Waiting)
	}
	f.endFrame("b", at(5*time.Second))
	if d := f.wait(at(5*time.Second), at(7*time.Second)); d.Waiting != "pressure 71 % ≥ 70 %: the turn ended: settling until 08:00:07 UTC" {
		t.Fatalf("Waiting %q", d.Waiting)
	}
}

func TestAnsweredBecauseSaysWhy(t *testing.T) {
	f := newFake(t, cfg70())
	f.started(at(0))
	f.turn("a", at(1*time.Second), at(2*time.Second))
	f.pressure(at(2*time.Second), 75)
	f.next(at(4*time.Second), Renew)
	f.p.AnsweredBecause(at(5*time.Second), Failed, "no handoff note:\nthe session has no transcript yet")
	r := f.record(at(5*time.Second), ReasonRefused)
	want := "the renewal asked at 75 % failed (no handoff note: the session has no transcript yet): not asking again until the pressure crosses 70 % again"
	if r.Detail != want {
		t.Fatalf("detail %q, want %q", r.Detail, want)
	}
}

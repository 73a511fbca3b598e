package autorenew

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// t0 is the fake clock's start (whole seconds, as at_epoch_s is).
var t0 = time.Unix(1_800_000_000, 0)

// at is t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

func receipt(ev contract.Event, when time.Time, summary map[string]any) contract.LifecycleReceipt {
	return contract.LifecycleReceipt{SchemaVersion: contract.SchemaVersion("lifeloop.v0.2"), Event: ev, Status: contract.StatusObserved, AtEpochS: when.Unix(), TelemetrySummary: summary}
}

// fake drives a Policy with receipts at times of the fake clock.
type fake struct {
	t *testing.T
	p *Policy
}

func newFake(t *testing.T, cfg Config) *fake { return &fake{t: t, p: New(cfg)} }

func (f *fake) see(rs ...contract.LifecycleReceipt) {
	for _, r := range rs {
		f.p.Observe(r)
	}
}

func (f *fake) started(when time.Time) { f.see(receipt(contract.EventSessionStarted, when, nil)) }

// turn is one top-level frame from open to end.
func (f *fake) turn(id string, open, end time.Time) {
	f.see(
		receipt(contract.EventFrameOpening, open, map[string]any{"frame_id": id}),
		receipt(contract.EventFrameOpened, open, map[string]any{"frame_id": id}),
		receipt(contract.EventFrameEnding, end, map[string]any{"frame_id": id}),
		receipt(contract.EventFrameEnded, end, map[string]any{"frame_id": id}),
	)
}

func (f *fake) openFrame(id string, when time.Time) {
	f.see(receipt(contract.EventFrameOpening, when, map[string]any{"frame_id": id}))
}

func (f *fake) endFrame(id string, when time.Time) {
	f.see(receipt(contract.EventFrameEnded, when, map[string]any{"frame_id": id}))
}

// pressure is a reading of percent of a 100000-token window.
func (f *fake) pressure(when time.Time, percent float64) {
	f.see(receipt(contract.EventContextPressureObserved, when, map[string]any{
		"percent": percent, "tokens": float64(int64(percent * 1000)), "window": float64(100000),
	}))
}

// renewal is a renewal's four receipts at when (policy evidence on each
// when byPolicy).
func (f *fake) renewal(when time.Time, byPolicy bool) {
	for _, step := range []struct {
		ev   contract.Event
		step string
	}{{contract.EventSessionEnding, "ending"}, {contract.EventSessionEnded, "ended"}, {contract.EventSessionStarting, "starting"}, {contract.EventSessionStarted, "started"}} {
		s := map[string]any{"reason": "renewal", "renewal_step": step.step, "renewal_attempt": float64(1), "resume": false}
		if byPolicy {
			s["policy"] = map[string]any{"client": "lifeloop-autorenew", "trigger_percent": 71.0}
		}
		f.see(receipt(step.ev, when, s))
	}
}

// next is Next at now; it fails the test unless its action is want.
func (f *fake) next(now time.Time, want Action) Decision {
	f.t.Helper()
	d := f.p.Next(now)
	if d.Action != want {
		f.t.Fatalf("Next(t0+%s) = %s (%q, report %+v), want %s", now.Sub(t0), d.Action, d.Waiting, d.Report, want)
	}
	return d
}

// wait is next(now, Wait) whose Until must be until (zero: none).
func (f *fake) wait(now, until time.Time) Decision {
	f.t.Helper()
	d := f.next(now, Wait)
	if !d.Until.Equal(until) {
		f.t.Fatalf("Next(t0+%s) waits until %s, want %s (%q)", now.Sub(t0), since(d.Until), since(until), d.Waiting)
	}
	return d
}

// record is next(now, Record) with reason, then Reported.
func (f *fake) record(now time.Time, reason Reason) Report {
	f.t.Helper()
	d := f.next(now, Record)
	if d.Report.Reason != reason {
		f.t.Fatalf("Next(t0+%s) records %q (%s), want %q", now.Sub(t0), d.Report.Reason, d.Report.Detail, reason)
	}
	f.p.Reported(now)
	return d.Report
}

func since(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return "t0+" + t.Sub(t0).String()
}

// cfg70 is the defaults at 70 %.
func cfg70() Config { return Defaults(Threshold{Percent: 70}) }

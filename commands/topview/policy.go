package topview

import (
	"fmt"

	"github.com/lifeloop/lifeloop/renewal"
)

// PolicyLine says in one line what the renewal policy did last for the
// session of r, for the live view's message line (where the 80-column
// layout, which has no renewal column, shows it too): "renewed by
// policy at 71 % (threshold 70 %), 2 of 3 this hour", "policy gave up:
// <detail>", "autorenew at 70 %: <what it waits for>"; "" when no
// policy is involved.
func PolicyLine(r Row) string {
	p := r.Policy
	if p == nil {
		return ""
	}
	id := ShortID(r.ID) + ": "
	switch {
	case p.ReportIsLatest():
		what := "policy gave up"
		if !p.Report.GaveUp() {
			what = "policy fell back"
		}
		if p.Report.Detail != "" {
			return id + what + ": " + p.Report.Detail
		}
		return id + what + " (" + p.Report.Reason + ")"
	case p.Renewal != nil:
		return id + "renewed by policy " + policyTrigger(*p.Renewal) + policyHour(p.Renewal.ThisHour, p.Renewal.PerHour)
	case p.Client != nil:
		s := id + "autorenew at " + p.Client.Threshold + policyHour(p.Client.ThisHour, p.Client.PerHour)
		if p.Client.Waiting != "" {
			s += ": " + p.Client.Waiting
		}
		return s
	}
	return ""
}

// policyTrigger is "at 71 % (threshold 70 %)" or "at 152k tokens
// (threshold 150k)".
func policyTrigger(ev renewal.Policy) string {
	var s string
	switch {
	case ev.TriggerPercent > 0:
		s = fmt.Sprintf("at %.0f %%", ev.TriggerPercent)
	case ev.TriggerTokens > 0:
		s = "at " + Tokens(ev.TriggerTokens) + " tokens"
	}
	switch {
	case ev.ThresholdPercent > 0:
		s += fmt.Sprintf(" (threshold %.0f %%)", ev.ThresholdPercent)
	case ev.ThresholdTokens > 0:
		s += " (threshold " + Tokens(ev.ThresholdTokens) + ")"
	}
	return s
}

func policyHour(this, per int) string {
	if per <= 0 {
		return ""
	}
	return fmt.Sprintf(", %d of %d this hour", this, per)
}

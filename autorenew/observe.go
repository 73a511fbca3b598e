package autorenew

import (
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/renewal"
)

// Observe takes the session's next receipt, in ledger order (from the
// ledger's first line when the policy attaches to a running session, so
// renewals it asked before a restart still count). What it tracks:
//
//   - Pressure: the latest context.pressure_observed (telemetry_summary
//     percent, tokens, window). A renewal, a harness compaction
//     (context.compacted) and a new conversation make it unknown again.
//   - Frames: the top-level frames open, by telemetry_summary frame_id
//     (frame.opening or frame.opened opens one; only its frame.ended
//     closes it — a frame.ending is not yet between turns, as the
//     recorded streams show with a reading between the two;
//     frames with a parent_frame_id are nested in an open one and not
//     counted), and the at_epoch_s of the last frame.ended of the
//     conversation.
//   - Renewals: a session.ending whose summary reason is "renewal"
//     starts one; the relaunch's session.started (reason "renewal",
//     including the fallback start of a relaunch that died) ends it, as
//     does a session.starting or session.started of it with status
//     failed. A renewal whose receipts carry a telemetry_summary
//     "policy" (any client's) is a policy renewal: it counts against
//     PerHour at the at_epoch_s of its first such receipt, and the first
//     pressure reading of the conversation it started is checked by the
//     futile guard.
//   - Its own reports: a capability.degraded the policy client recorded
//     in an earlier run (before a restart) is not recorded again.
//   - The end: a session.ending or session.ended that is not a
//     renewal's ends the policy's work (Done).
func (p *Policy) Observe(r contract.LifecycleReceipt) {
	if p.ended {
		return
	}
	s := r.TelemetrySummary
	at := receiptTime(r)
	renewalStep := text(s["reason"]) == "renewal"
	if renewalStep && isSessionEvent(r.Event) {
		p.observeRenewal(r, at)
		return
	}
	switch r.Event {
	case contract.EventSessionStarted:
		if p.renewal != nil {
			// A relaunch that did not say it was the renewal's.
			p.endRenewal(r.Status != contract.StatusFailed)
			return
		}
		p.newConversation(false)
	case contract.EventSessionEnding, contract.EventSessionEnded:
		p.ended = true
	case contract.EventFrameOpening, contract.EventFrameOpened:
		if text(s["parent_frame_id"]) == "" {
			p.open[frameID(r)] = true
		}
	case contract.EventFrameEnded:
		if text(s["parent_frame_id"]) == "" {
			p.closeFrame(frameID(r))
			p.framesEnded++
			p.lastFrameEnd = at
			if !p.refusedAt.IsZero() && !at.Before(p.refusedAt.Truncate(time.Second)) {
				p.refusedAt = time.Time{} // a new turn ended since the refusal
			}
		}
	case contract.EventContextPressureObserved:
		p.observePressure(readingOf(r))
	case contract.EventContextCompacted:
		p.forgetPressure()
	case contract.EventCapabilityDegraded:
		p.observeReport(s)
	}
}

// observeReport takes a capability.degraded receipt: a report of the
// policy's own (telemetry_summary "policy" of client PolicyClientID,
// decision "gave_up") that this Policy did not record is one of an
// earlier run of the client, read again after a restart: what it said
// is not said again (a pending report of that reason is dropped), and
// the crossing it gave up on stays given up.
func (p *Policy) observeReport(s map[string]any) {
	pol, _ := s["policy"].(map[string]any)
	if pol == nil || text(pol["client"]) != renewal.PolicyClientID || text(pol["decision"]) != "gave_up" {
		return
	}
	reason := Reason(text(pol["reason"]))
	p.reportsSeen[reason]++
	if p.reportsSeen[reason] <= p.reportsMade[reason] {
		return // one this Policy recorded
	}
	for i, r := range p.reports {
		if r.Reason == reason {
			p.reports = append(p.reports[:i], p.reports[i+1:]...)
			break
		}
	}
	if c := p.crossing; c != nil {
		switch reason {
		case ReasonSessionLimit:
			c.limitSaid = true
		case ReasonNoSafeMoment, ReasonMachineLimit, ReasonRefused:
			c.gaveUp = true
		}
	}
}

// observeRenewal follows one session.* receipt of a renewal.
func (p *Policy) observeRenewal(r contract.LifecycleReceipt, at time.Time) {
	if p.renewal == nil {
		p.startRenewal()
	}
	if pol, ok := r.TelemetrySummary["policy"].(map[string]any); ok && pol != nil && !p.renewal.policy {
		p.renewal.policy = true
		p.countPolicyRenewal(at)
	}
	switch r.Event {
	case contract.EventSessionStarting:
		if r.Status == contract.StatusFailed {
			p.endRenewal(false)
		}
	case contract.EventSessionStarted:
		step := text(r.TelemetrySummary["renewal_step"])
		p.endRenewal(r.Status != contract.StatusFailed && !strings.HasPrefix(step, "fallback"))
	}
}

// startRenewal notes a renewal under way: the conversation is ending,
// its pressure and frames with it.
func (p *Policy) startRenewal() {
	p.renewal = &renewalSeen{}
	p.renewalsStarted++
	p.awaitingRenewal = false
	p.forgetPressure()
	clear(p.open)
}

// endRenewal ends the renewal under way; relaunched says the relaunch
// it asked for started (not a failure, not the fallback).
func (p *Policy) endRenewal(relaunched bool) {
	policy := p.renewal.policy
	p.renewal = nil
	p.newConversation(policy)
	p.futileArmed = policy && relaunched
}

// newConversation starts the next conversation: nothing known of its
// pressure or turns. A conversation the policy did not start lifts the
// futile guard's stop.
func (p *Policy) newConversation(byPolicy bool) {
	p.forgetPressure()
	clear(p.open)
	p.framesEnded = 0
	p.lastFrameEnd = time.Time{}
	p.futileArmed = false
	if !byPolicy {
		p.futileStop = false
	}
}

// observePressure takes a pressure reading: the futile guard's first
// reading after a policy renewal, and the start or end of a crossing.
func (p *Policy) observePressure(rd reading) {
	over, known := p.cfg.Threshold.reached(rd)
	if !known {
		return
	}
	p.pressure = &rd
	if p.futileArmed {
		p.futileArmed = false
		if near, _ := p.cfg.Threshold.nearly(rd, p.cfg.FutileMargin); near {
			p.futileStop = true
			p.report(ReasonFutile, p.evidence(rd, 0), futileDetail(p.cfg, rd))
		}
	}
	switch {
	case !over:
		p.crossing = nil
	case p.crossing == nil:
		p.crossing = &crossing{start: rd.at}
	}
}

// forgetPressure makes the pressure unknown and ends the crossing.
func (p *Policy) forgetPressure() {
	p.pressure = nil
	p.crossing = nil
}

// countPolicyRenewal counts a policy renewal the stream shows at at,
// unless it is the one a Failed answer counted already.
func (p *Policy) countPolicyRenewal(at time.Time) {
	p.policyRenewals++
	for i, f := range p.failedAsks {
		if !at.Before(f.asked.Truncate(time.Second)) && !at.After(f.answered.Add(time.Second)) {
			p.counted[f.index] = at
			p.failedAsks = append(p.failedAsks[:i], p.failedAsks[i+1:]...)
			return
		}
	}
	p.counted = append(p.counted, at)
}

// closeFrame closes top-level frame id; a frame that ends without an id
// closes every open one (top-level frames of a harness take turns), and
// any end closes a frame that opened without one.
func (p *Policy) closeFrame(id string) {
	if id == "" {
		clear(p.open)
		return
	}
	delete(p.open, id)
	delete(p.open, "")
}

// frameID is a frame receipt's frame: telemetry_summary.frame_id, else
// the frame of its "<frame>/<event>" event id.
func frameID(r contract.LifecycleReceipt) string {
	if id := text(r.TelemetrySummary["frame_id"]); id != "" {
		return id
	}
	if id, ok := strings.CutSuffix(r.EventID, "/"+string(r.Event)); ok {
		return id
	}
	return ""
}

func isSessionEvent(ev contract.Event) bool {
	switch ev {
	case contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnding, contract.EventSessionEnded:
		return true
	}
	return false
}

package autorenew

import (
	"fmt"
	"time"

	"github.com/lifeloop/lifeloop/renewal"
)

// Policy is the renewal rule over one session's stream. It is not safe
// for concurrent use.
//
// Next decides, in this order: Done once the session ended; Record
// while a report is pending; Wait while a renewal runs, a renewal asked
// for is unanswered (or answered Renewed and not yet in the stream), or
// the futile guard stopped this conversation; Wait while the pressure
// is unknown or below the threshold. Over the threshold (a crossing,
// from the first reading over it until a reading below it or a new
// conversation):
//
//   - PerHour policy renewals in the last hour already: Record
//     ReasonSessionLimit once for the crossing, then Wait until the
//     oldest of them leaves the hour.
//   - Not a safe moment — a top-level frame open, no frame ended yet in
//     this conversation, or the wrapper answered NotNow and no turn has
//     ended since: Wait, until WaitMax after the crossing started; then
//     Record ReasonNoSafeMoment once and give up on this crossing.
//   - Less than Settle since the last frame ended: Wait until then.
//   - Busy answered less than BusyRetry ago: Wait until then; Busy
//     answered at WaitMax after the crossing started: Record
//     ReasonMachineLimit once and give up on this crossing.
//   - Else Renew, with the evidence: the threshold, the latest reading,
//     the renewals this hour (this one included) and PerHour.
//
// The futile guard: the first pressure reading of a conversation a
// policy renewal started (its relaunch, not the fallback start of a
// relaunch that died) at or over the threshold less FutileMargin
// (percentage points; for a token threshold, FutileMargin percent of
// it) records ReasonFutile once and stops renewing this conversation,
// until a conversation starts that no policy renewal started (the
// session's first, or a person's renewal).
//
// Each report is recorded once per cause: futile once per
// conversation, session_limit, no_safe_moment and machine_limit once
// per crossing, refused once per failed ask.
type Policy struct {
	cfg Config

	ended bool
	// The conversation: its pressure, open top-level frames (by id),
	// frames ended and the last one's end.
	pressure     *reading
	crossing     *crossing
	open         map[string]bool
	framesEnded  int
	lastFrameEnd time.Time
	// The renewal the stream shows under way, nil when none.
	renewal *renewalSeen
	// The futile guard: armed by a policy renewal's relaunch for the
	// first reading; futileStop stops renewing this conversation.
	futileArmed bool
	futileStop  bool
	// counted is when each counted policy renewal happened; failedAsks
	// are those a Failed answer counted that the stream may show later.
	counted        []time.Time
	failedAsks     []failedAsk
	policyRenewals int
	// renewalsStarted counts the renewals the stream showed.
	renewalsStarted int
	// The renewal asked for: outstanding until Answered; awaiting its
	// receipts after Renewed; refusedAt is a NotNow's time (zero: none
	// or a turn ended since).
	ask             *ask
	awaitingRenewal bool
	refusedAt       time.Time
	// reports are the Reports not yet Reported, oldest first;
	// reportsMade counts those Reported by reason, reportsSeen the
	// policy's reports the stream showed.
	reports                  []Report
	reportsMade, reportsSeen map[Reason]int
}

// crossing is one spell of pressure over the threshold.
type crossing struct {
	start       time.Time
	gaveUp      bool
	limitSaid   bool
	busyRetryAt time.Time
}

// renewalSeen is the renewal the stream shows under way.
type renewalSeen struct{ policy bool }

// ask is the renewal the policy asked for.
type ask struct {
	at       time.Time
	crossing *crossing
	evidence renewal.Policy
	// renewalsSeen and policySeen are renewalsStarted and
	// policyRenewals when asked.
	renewalsSeen, policySeen int
}

// failedAsk is an ask answered Failed, counted at counted[index].
type failedAsk struct {
	asked, answered time.Time
	index           int
}

// New returns the policy of one session under cfg.
func New(cfg Config) *Policy {
	return &Policy{cfg: cfg, open: map[string]bool{}, reportsMade: map[Reason]int{}, reportsSeen: map[Reason]int{}}
}

// Config is the policy's rules.
func (p *Policy) Config() Config { return p.cfg }

// ThisHour counts the session's policy renewals (and failed asks) in the
// hour up to now.
func (p *Policy) ThisHour(now time.Time) int {
	n := 0
	for _, t := range p.counted {
		if inHour(t, now) {
			n++
		}
	}
	return n
}

// inHour reports whether t is in the hour up to now.
func inHour(t, now time.Time) bool { return !t.After(now) && now.Sub(t) < time.Hour }

// Next says what to do at now.
func (p *Policy) Next(now time.Time) Decision {
	switch {
	case p.ended:
		return Decision{Action: Done}
	case len(p.reports) > 0:
		return Decision{Action: Record, Report: p.reports[0]}
	case p.renewal != nil:
		return p.wait(time.Time{}, "a renewal is running")
	case p.ask != nil:
		return p.wait(time.Time{}, "waiting for the wrapper's answer to the renewal asked at "+clock(p.ask.at))
	case p.awaitingRenewal:
		return p.wait(time.Time{}, "the renewal ran: waiting for its receipts")
	case p.futileStop:
		return p.wait(time.Time{}, "not renewing this conversation: it started within the futile margin of the threshold")
	case p.pressure == nil:
		return p.wait(time.Time{}, "")
	case p.crossing == nil:
		return p.wait(time.Time{}, p.pressureLine("<"))
	}
	c, rd := p.crossing, *p.pressure
	head := p.pressureLine("≥")
	if c.gaveUp {
		return p.wait(time.Time{}, head+": gave up at this crossing")
	}
	if n := p.ThisHour(now); n >= p.cfg.PerHour {
		if !c.limitSaid {
			c.limitSaid = true
			return p.record(ReasonSessionLimit, p.evidence(rd, n), sessionLimitDetail(p.cfg, rd, n, p.hourFree(now)))
		}
		free := p.hourFree(now)
		return p.wait(free, fmt.Sprintf("%s: %d of %d renewals this hour: waiting until %s", head, n, p.cfg.PerHour, clock(free)))
	}
	deadline := c.start.Add(p.cfg.WaitMax)
	if why := p.notSafe(); why != "" {
		if !now.Before(deadline) {
			c.gaveUp = true
			return p.record(ReasonNoSafeMoment, p.evidence(rd, p.ThisHour(now)), noSafeMomentDetail(p.cfg, rd))
		}
		return p.wait(deadline, head+": "+why)
	}
	if settled := p.lastFrameEnd.Add(p.cfg.Settle); now.Before(settled) {
		return p.wait(settled, head+": the turn ended: settling until "+clock(settled))
	}
	if now.Before(c.busyRetryAt) {
		return p.wait(c.busyRetryAt, head+": no renewal slot free on this machine: trying again at "+clock(c.busyRetryAt))
	}
	ev := p.evidence(rd, p.ThisHour(now)+1)
	p.ask = &ask{at: now, crossing: c, evidence: ev, renewalsSeen: p.renewalsStarted, policySeen: p.policyRenewals}
	return Decision{Action: Renew, Resume: p.cfg.Resume, Evidence: ev, Waiting: head + ": renewing"}
}

// notSafe says why now is not a safe moment, or "".
func (p *Policy) notSafe() string {
	switch {
	case len(p.open) > 0:
		return "waiting for the turn to end"
	case p.framesEnded == 0:
		return "waiting for a turn to end in this conversation"
	case !p.refusedAt.IsZero():
		return "the wrapper said not between turns (a turn open or keys typed): waiting for the next turn to end"
	}
	return ""
}

// hourFree is when the oldest renewal counted in the hour up to now
// leaves it.
func (p *Policy) hourFree(now time.Time) time.Time {
	var oldest time.Time
	for _, t := range p.counted {
		if inHour(t, now) && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	return oldest.Add(time.Hour)
}

// Answered tells the policy how the renewal it asked for ended.
//
//   - Renewed: the stream shows the rest; the policy asks nothing until
//     it shows the renewal's receipts.
//   - NotNow: the policy does not ask again until a frame.ended newer
//     than the refusal (a turn open, or keys typed since the last turn:
//     asking before the next turn ends is pointless).
//   - Busy: the policy asks again after BusyRetry, up to WaitMax after
//     the crossing started; then it records ReasonMachineLimit once.
//   - Failed: counts against PerHour (unless the stream already showed
//     that renewal's receipts with policy evidence, which counted it;
//     receipts of it the stream shows later are not counted again),
//     records ReasonRefused, and the policy asks no more at this
//     crossing.
func (p *Policy) Answered(now time.Time, res Result) { p.AnsweredBecause(now, res, "") }

// AnsweredBecause is Answered with why the renewal failed, for a person
// (the wrapper's refusal, "no handoff note: the session has no
// transcript yet"): a Failed's ReasonRefused report says it.
func (p *Policy) AnsweredBecause(now time.Time, res Result, why string) {
	a := p.ask
	if a == nil {
		return
	}
	p.ask = nil
	switch res {
	case Renewed:
		if p.renewalsStarted == a.renewalsSeen {
			p.awaitingRenewal = true
		}
	case NotNow:
		p.refusedAt = now
	case Busy:
		c := a.crossing
		if c != p.crossing || c.gaveUp {
			return
		}
		if !now.Before(c.start.Add(p.cfg.WaitMax)) {
			c.gaveUp = true
			p.report(ReasonMachineLimit, a.evidence, machineLimitDetail(p.cfg, a.evidence))
			return
		}
		c.busyRetryAt = now.Add(BusyRetry)
	case Failed:
		if p.policyRenewals == a.policySeen {
			p.counted = append(p.counted, now)
			p.failedAsks = append(p.failedAsks, failedAsk{asked: a.at, answered: now, index: len(p.counted) - 1})
		}
		if a.crossing == p.crossing && a.crossing != nil {
			a.crossing.gaveUp = true
		}
		ev := a.evidence
		ev.ThisHour = p.ThisHour(now)
		p.report(ReasonRefused, ev, refusedDetail(p.cfg, ev, why))
	}
}

// Reported tells the policy its Report was recorded.
func (p *Policy) Reported(now time.Time) {
	if len(p.reports) > 0 {
		p.reportsMade[p.reports[0].Reason]++
		p.reports = p.reports[1:]
	}
}

// record queues a report and returns its Record.
func (p *Policy) record(reason Reason, ev renewal.Policy, detail string) Decision {
	p.report(reason, ev, detail)
	return Decision{Action: Record, Report: p.reports[0]}
}

// report queues a report for the runner to record.
func (p *Policy) report(reason Reason, ev renewal.Policy, detail string) {
	p.reports = append(p.reports, Report{Reason: reason, Detail: detail, Evidence: ev})
}

// wait is a Wait until (zero: the next receipt) with a line for a person.
func (p *Policy) wait(until time.Time, why string) Decision {
	return Decision{Action: Wait, Until: until, Waiting: why}
}

// evidence is the renewal.Policy of reading rd with thisHour renewals.
func (p *Policy) evidence(rd reading, thisHour int) renewal.Policy {
	ev := renewal.Policy{
		Client:           renewal.PolicyClientID,
		ThresholdPercent: p.cfg.Threshold.Percent,
		ThresholdTokens:  p.cfg.Threshold.Tokens,
		TriggerTokens:    rd.tokens,
		Window:           rd.window,
		ThisHour:         thisHour,
		PerHour:          p.cfg.PerHour,
	}
	if pct, ok := rd.percentOf(); ok {
		ev.TriggerPercent = round1(pct)
	}
	return ev
}

// pressureLine is "pressure 71 % ≥ 70 %" (cmp "≥" or "<").
func (p *Policy) pressureLine(cmp string) string {
	return "pressure " + readingText(p.cfg.Threshold, *p.pressure) + " " + cmp + " " + thresholdText(p.cfg.Threshold)
}

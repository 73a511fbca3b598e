package autorenew

import (
	"fmt"
	"time"

	"github.com/lifeloop/lifeloop/renewal"
)

// Config is the policy's rules; each field has a documented default
// (Defaults) a person can change with a flag of `lifeloop autorenew`.
type Config struct {
	Threshold Threshold
	// Resume renews by resuming the harness conversation instead of
	// starting a fresh one (the default: fresh, with the handoff note).
	Resume bool
	// Settle is how long the session must have been between turns (the
	// last frame ended, none open) before the policy asks.
	Settle time.Duration
	// FutileMargin, in percentage points of the window (or of the token
	// threshold), is the futile guard: when the new conversation's first
	// pressure reading is already within it of the threshold, the
	// policy stops renewing this session and says why.
	FutileMargin float64
	// PerHour bounds this session's policy renewals in any hour (asked
	// renewals that failed count too).
	PerHour int
	// WaitMax bounds how long the policy waits for a safe moment (or a
	// machine lease) after the threshold was crossed; then it gives up
	// on that crossing and says so.
	WaitMax time.Duration
}

// The defaults of Config's rules.
const (
	DefaultSettle       = 2 * time.Second
	DefaultFutileMargin = 10.0
	DefaultPerHour      = 3
	DefaultWaitMax      = 30 * time.Minute
	// BusyRetry is how long the policy waits before asking again when
	// no machine lease was free (Busy).
	BusyRetry = 5 * time.Second
)

// Defaults are the rules' defaults: Settle 2 s, FutileMargin 10 points,
// PerHour 3, WaitMax 30 min; fresh renewals.
func Defaults(t Threshold) Config {
	return Config{Threshold: t, Settle: DefaultSettle, FutileMargin: DefaultFutileMargin, PerHour: DefaultPerHour, WaitMax: DefaultWaitMax}
}

// Validate says what is wrong with c, naming the rule, or nil.
func (c Config) Validate() error {
	switch {
	case !c.Threshold.Valid():
		return fmt.Errorf("threshold %q: give a percentage of the context window (70%%) or a token count (150000, 150k)", c.Threshold.String())
	case c.PerHour < 1:
		return fmt.Errorf("renewals per hour %d: give 1 or more", c.PerHour)
	case c.Settle < 0:
		return fmt.Errorf("settle %s: give 0 or more", c.Settle)
	case c.WaitMax <= 0:
		return fmt.Errorf("wait max %s: give a duration above 0 (30m)", c.WaitMax)
	case c.FutileMargin < 0 || c.FutileMargin >= 100:
		return fmt.Errorf("futile margin %v: give points from 0 to below 100 (10)", c.FutileMargin)
	}
	return nil
}

// Action is what the policy asks its runner to do now.
type Action int

const (
	// Wait: nothing to do until Decision.Until or the next receipt.
	Wait Action = iota
	// Renew: ask the wrapper for a renewal between turns
	// (renewal.Request{BetweenTurns: true, Resume: Decision.Resume,
	// Policy: &Decision.Evidence}, the note added by the runner), then
	// call Answered with how it ended.
	Renew
	// Record: record Decision.Report (a capability.degraded receipt
	// through the wrapper's emit, and the State file), then call
	// Reported. The policy says so once per cause.
	Record
	// Done: the session ended; the policy has nothing more to do.
	Done
)

// String names the action ("wait", "renew", "record", "done").
func (a Action) String() string {
	switch a {
	case Wait:
		return "wait"
	case Renew:
		return "renew"
	case Record:
		return "record"
	case Done:
		return "done"
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// Decision is one answer of Policy.Next.
type Decision struct {
	Action Action
	// Until is when to call Next again at the latest (Wait); zero: only
	// after the next receipt.
	Until time.Time
	// Resume and Evidence go with a Renew (Evidence's note fields are
	// the runner's to fill).
	Resume   bool
	Evidence renewal.Policy
	// Report is what a Record records.
	Report Report
	// Waiting says, for a person, what a Wait waits for ("pressure 71 %
	// ≥ 70 %: waiting for the turn to end"); "" when nothing is known
	// yet. It is State.Waiting.
	Waiting string
}

// Reason is why the policy gave up or stepped aside.
type Reason string

const (
	ReasonFutile        Reason = "futile"         // the new conversation started within the margin of the threshold
	ReasonSessionLimit  Reason = "session_limit"  // PerHour renewals this hour already
	ReasonMachineLimit  Reason = "machine_limit"  // no lease free on the machine within WaitMax
	ReasonNoSafeMoment  Reason = "no_safe_moment" // no safe moment within WaitMax
	ReasonRefused       Reason = "refused"        // the wrapper refused or the renewal failed; not retried for this crossing
	ReasonHandoffFailed Reason = "handoff_failed" // the person's handoff command failed; the built-in note was used
	ReasonClientExited  Reason = "client_exited"  // the policy client itself exited (recorded by `run`)
)

// Result is how an asked renewal ended.
type Result int

const (
	// Renewed: the renewal ran (delivered or undelivered).
	Renewed Result = iota
	// NotNow: refused as not between turns (control.CodeNotBetweenTurns):
	// nothing happened; the policy waits for the next safe moment.
	NotNow
	// Busy: no machine lease was free; the policy tries again shortly,
	// up to WaitMax.
	Busy
	// Failed: refused or failed otherwise (placement unavailable, a
	// relaunch that died, no live wrapper): counts against PerHour and
	// is not asked again for this crossing.
	Failed
)

// String names the result ("renewed", "not_now", "busy", "failed"),
// as State.LastResult shows it.
func (r Result) String() string {
	switch r {
	case Renewed:
		return "renewed"
	case NotNow:
		return "not_now"
	case Busy:
		return "busy"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("result(%d)", int(r))
}

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

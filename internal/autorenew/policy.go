package autorenew

import (
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/renewal"
)

// Threshold is when a session's context is full enough to renew: a
// percentage of the model's window, or a number of tokens.
type Threshold struct {
	Percent float64 // in (0, 100); 0 when Tokens is set
	Tokens  int64   // > 0; 0 when Percent is set
}

// ParseThreshold reads "70%" (a percentage of the window) or "150000" /
// "150k" (tokens). It refuses anything else, naming what it expects.
func ParseThreshold(s string) (Threshold, error) { panic("autorenew: not built yet") }

// String is the threshold as ParseThreshold reads it ("70%", "150000").
func (t Threshold) String() string { panic("autorenew: not built yet") }

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

// Defaults are the rules' defaults: Settle 2 s, FutileMargin 10 points,
// PerHour 3, WaitMax 30 min; fresh renewals.
func Defaults(t Threshold) Config { panic("autorenew: not built yet") }

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

// Report is what the policy records when it gives up or steps aside:
// the telemetry_summary "policy" object of a capability.degraded receipt
// (Map) and a line for a person (Detail).
type Report struct {
	Reason Reason
	Detail string
	// Evidence is the pressure and limits at the time.
	Evidence renewal.Policy
}

// Map is r as the "policy" object of its receipt's telemetry_summary:
// Evidence.Map() with "decision": "gave_up" (or "fallback" for
// ReasonHandoffFailed), "reason" and "detail".
func (r Report) Map() map[string]any { panic("autorenew: not built yet") }

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

// Policy is the renewal rule over one session's stream. It is not safe
// for concurrent use.
type Policy struct {
	cfg Config
}

// New returns the policy of one session under cfg.
func New(cfg Config) *Policy { return &Policy{cfg: cfg} }

// Observe takes the session's next receipt, in ledger order (from the
// ledger's first line when the policy attaches to a running session, so
// renewals it asked before a restart still count).
func (p *Policy) Observe(r contract.LifecycleReceipt) { panic("autorenew: not built yet") }

// Next says what to do at now.
func (p *Policy) Next(now time.Time) Decision { panic("autorenew: not built yet") }

// Answered tells the policy how the renewal it asked for ended.
func (p *Policy) Answered(now time.Time, res Result) { panic("autorenew: not built yet") }

// Reported tells the policy its Report was recorded.
func (p *Policy) Reported(now time.Time) { panic("autorenew: not built yet") }

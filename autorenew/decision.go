package autorenew

import (
	"fmt"
	"time"

	"github.com/lifeloop/lifeloop/renewal"
)

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

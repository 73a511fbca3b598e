package adapters

import (
	"strings"
	"time"
	"unicode"
)

// AttentionReader is a harness whose own signals tell whether its session
// works or waits for a person (a dialog, a question, a finished turn, an
// error that stopped the turn). Each method maps one signal, measured
// from the pinned binary, to an AttentionFact; ok is false for a signal
// that says nothing about attention. A harness implements the methods it
// has signals for and returns ok false (or no rules) from the others.
type AttentionReader interface {
	// AttentionEvent maps one hook payload or plug-in bus event,
	// received at.
	AttentionEvent(payload []byte, at time.Time) (AttentionFact, bool)
	// AttentionRecord maps one line of the harness's own session file,
	// observed at the line's own timestamp.
	AttentionRecord(line []byte) (AttentionFact, bool)
	// AttentionScreen is the text the harness's dialogs draw on its
	// terminal.
	AttentionScreen() []AttentionScreenRule
}

// AttentionKind is what an AttentionFact says.
type AttentionKind string

// The kinds of attention facts.
const (
	// AttentionClaim: the source says the session is in State (a hook, a
	// record of the harness's files, a screen match).
	AttentionClaim AttentionKind = "claim"
	// AttentionTurnStarted: a turn began (frame.opened, or the prompt
	// hook).
	AttentionTurnStarted AttentionKind = "turn_started"
	// AttentionTurnEnded: a turn finished (frame.ended, or the turn-end
	// hook).
	AttentionTurnEnded AttentionKind = "turn_ended"
	// AttentionKeyTyped: the person typed at the session's terminal.
	AttentionKeyTyped AttentionKind = "key_typed"
)

// Boundary reports whether k is a turn boundary: the facts a reader of
// the ledger takes from frame receipts rather than from hooks.
func (k AttentionKind) Boundary() bool { return k == AttentionTurnStarted || k == AttentionTurnEnded }

// AttentionState is a session's attention state.
type AttentionState string

// The attention states.
const (
	// AttentionUnknown: no evidence yet.
	AttentionUnknown AttentionState = "unknown"
	// AttentionWorking: a turn is under way and the harness is producing.
	AttentionWorking AttentionState = "working"
	// AttentionNeedsPermission: a tool call waits for the person's
	// approval.
	AttentionNeedsPermission AttentionState = "needs_permission"
	// AttentionNeedsAnswer: the harness asked the person a question.
	AttentionNeedsAnswer AttentionState = "needs_answer"
	// AttentionWaitingForInput: the turn finished; the harness waits for
	// a prompt.
	AttentionWaitingForInput AttentionState = "waiting_for_input"
	// AttentionStoppedOnError: the turn stopped on an error (API error,
	// rate limit, authentication).
	AttentionStoppedOnError AttentionState = "stopped_on_error"
)

// Waiting reports whether s is a state in which the session waits for a
// person.
func (s AttentionState) Waiting() bool {
	switch s {
	case AttentionNeedsPermission, AttentionNeedsAnswer, AttentionWaitingForInput, AttentionStoppedOnError:
		return true
	}
	return false
}

// Blocking reports whether s waits for a person in the middle of a turn
// (a dialog is open): not a safe moment to renew the session.
func (s AttentionState) Blocking() bool {
	return s == AttentionNeedsPermission || s == AttentionNeedsAnswer
}

// AttentionSource is where a piece of attention evidence came from.
type AttentionSource string

// The sources. Frame is the wrapper's own view of the session: frames
// opened and ended, and keys typed at its terminal.
const (
	AttentionFromHook       AttentionSource = "hook"
	AttentionFromTranscript AttentionSource = "transcript"
	AttentionFromScreen     AttentionSource = "screen"
	AttentionFromFrame      AttentionSource = "frame"
)

// AttentionFact is one piece of attention evidence, observed At.
type AttentionFact struct {
	At     time.Time
	Kind   AttentionKind
	Source AttentionSource
	// State is what a Claim says; empty for other kinds.
	State AttentionState
	// Detail names what the person is asked about (a tool name, a
	// question's summary, an error kind): bounded by BoundDetail, never
	// a payload body.
	Detail string
	// Evidence names the exact signal, e.g. "Notification:permission_prompt".
	Evidence string
}

// AttentionScreenRule names text a harness's dialog draws and the state
// it shows.
type AttentionScreenRule struct {
	Text  string
	State AttentionState
	// Evidence names the dialog, e.g. "<harness>:permission-dialog".
	Evidence string
}

// MaxAttentionDetail is the most runes an AttentionFact's Detail keeps.
const MaxAttentionDetail = 80

// BoundDetail makes s a Detail: one line of at most MaxAttentionDetail runes,
// control characters removed, an ellipsis where it was cut.
func BoundDetail(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > MaxAttentionDetail {
		return string(r[:MaxAttentionDetail-1]) + "…"
	}
	return s
}

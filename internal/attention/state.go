package attention

// State is a session's attention state.
type State string

// The attention states.
const (
	// Unknown: no evidence yet.
	Unknown State = "unknown"
	// Working: a turn is under way and the harness is producing.
	Working State = "working"
	// NeedsPermission: a tool call waits for the person's approval.
	NeedsPermission State = "needs_permission"
	// NeedsAnswer: the harness asked the person a question.
	NeedsAnswer State = "needs_answer"
	// WaitingForInput: the turn finished; the harness waits for a prompt.
	WaitingForInput State = "waiting_for_input"
	// StoppedOnError: the turn stopped on an error (API error, rate
	// limit, authentication).
	StoppedOnError State = "stopped_on_error"
)

// Waiting reports whether s is a state in which the session waits for a
// person: the states that make an Episode.
func (s State) Waiting() bool {
	switch s {
	case NeedsPermission, NeedsAnswer, WaitingForInput, StoppedOnError:
		return true
	}
	return false
}

// Blocking reports whether s waits for a person in the middle of a turn
// (a dialog is open): not a safe moment to renew the session.
func (s State) Blocking() bool { return s == NeedsPermission || s == NeedsAnswer }

// Source is where a piece of evidence came from.
type Source string

// The sources, most trusted first. Frame is the wrapper's own view of the
// session: frames opened and ended, and keys typed at its terminal.
const (
	SourceHook       Source = "hook"
	SourceTranscript Source = "transcript"
	SourceScreen     Source = "screen"
	SourceFrame      Source = "frame"
)

// trust ranks the sources of claims: higher is more trusted. Frame facts
// are boundaries, not claims; they rank with hooks.
func (s Source) trust() int {
	switch s {
	case SourceHook, SourceFrame:
		return 3
	case SourceTranscript:
		return 2
	case SourceScreen:
		return 1
	}
	return 0
}

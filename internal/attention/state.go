package attention

import "github.com/lifeloop/lifeloop/adapters"

// State is a session's attention state.
type State = adapters.AttentionState

// The attention states: see adapters.AttentionState.
const (
	Unknown         = adapters.AttentionUnknown
	Working         = adapters.AttentionWorking
	NeedsPermission = adapters.AttentionNeedsPermission
	NeedsAnswer     = adapters.AttentionNeedsAnswer
	WaitingForInput = adapters.AttentionWaitingForInput
	StoppedOnError  = adapters.AttentionStoppedOnError
)

// Source is where a piece of evidence came from.
type Source = adapters.AttentionSource

// The sources, most trusted first. Frame is the wrapper's own view of the
// session: frames opened and ended, and keys typed at its terminal.
const (
	SourceHook       = adapters.AttentionFromHook
	SourceTranscript = adapters.AttentionFromTranscript
	SourceScreen     = adapters.AttentionFromScreen
	SourceFrame      = adapters.AttentionFromFrame
)

// trust ranks the sources of claims: higher is more trusted. Frame facts
// are boundaries, not claims; they rank with hooks.
func trust(s Source) int {
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

// standing is how firmly the current state's source holds its episode
// against a claim of another source: its trust, except that a state the
// frames set (a finished turn) gives way to the harness's files as to a
// hook — an error written after the turn ended, as a harness that
// retries by itself writes it — though never to the screen.
func standing(s Source) int {
	if s == SourceFrame {
		return trust(SourceTranscript)
	}
	return trust(s)
}

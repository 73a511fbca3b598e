package attention

import (
	"strings"
	"time"
	"unicode"
)

// FactKind is what a Fact says.
type FactKind string

// The kinds of facts.
const (
	// Claim: the source says the session is in State (a hook, a record
	// of the harness's files, a screen match).
	Claim FactKind = "claim"
	// TurnStarted: a turn began (frame.opened, or the prompt hook).
	TurnStarted FactKind = "turn_started"
	// TurnEnded: a turn finished (frame.ended, or the turn-end hook).
	TurnEnded FactKind = "turn_ended"
	// KeyTyped: the person typed at the session's terminal.
	KeyTyped FactKind = "key_typed"
)

// Boundary reports whether k is a turn boundary: the facts a reader of
// the ledger takes from frame receipts rather than from hooks.
func (k FactKind) Boundary() bool { return k == TurnStarted || k == TurnEnded }

// Fact is one piece of evidence, observed At.
type Fact struct {
	At     time.Time
	Kind   FactKind
	Source Source
	// State is what a Claim says; empty for other kinds.
	State State
	// Detail names what the person is asked about (a tool name, a
	// question's summary, an error kind): bounded by Bound, never a
	// payload body.
	Detail string
	// Evidence names the exact signal, e.g. "Notification:permission_prompt".
	Evidence string
}

// MaxDetail is the most runes a Detail keeps.
const MaxDetail = 80

// Bound makes s a Detail: one line of at most MaxDetail runes, control
// characters removed, an ellipsis where it was cut.
func Bound(s string) string {
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
	if r := []rune(s); len(r) > MaxDetail {
		return string(r[:MaxDetail-1]) + "…"
	}
	return s
}

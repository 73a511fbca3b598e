package topview

import (
	"fmt"
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/internal/attention"
)

// Attention is a session's attention as top shows it
// (sessionview.Attention: the latest tick's block).
type Attention = sessionview.Attention

// NeedsPerson reports whether the session waits for a person.
func (r Row) NeedsPerson() bool { return r.Attention.NeedsPerson() }

// AttentionText is the wide layout's attention column: "permission
// 4m12s · Bash", "question 10s · which database?", "error 2m00s ·
// rate_limit", "waiting 30s", "working"; "-" when the harness's signals
// tell nothing (or not yet), or the session ended.
func AttentionText(r Row, now time.Time) string {
	a := r.Attention
	if a == nil || a.State == attention.Unknown {
		return "-"
	}
	if !a.State.Waiting() {
		return a.Label()
	}
	label := map[attention.State]string{
		attention.NeedsPermission: "permission", attention.NeedsAnswer: "question",
		attention.StoppedOnError: "error", attention.WaitingForInput: "waiting",
	}[a.State]
	s := label + " " + WaitDur(a.For(now))
	if a.Detail != "" {
		s += " · " + a.Detail
	}
	return s
}

// attentionShort is the attention in the narrow layout's ten-cell
// activity column: "permit 4m", "answer 30s", "error 2m", "wait 1h07";
// "" when the session waits for no one (the column then shows the
// activity).
func attentionShort(r Row, now time.Time) string {
	a := r.Attention
	if !a.NeedsPerson() || r.State == "paused" {
		return "" // a paused session says "stopped"
	}
	label := map[attention.State]string{
		attention.NeedsPermission: "permit", attention.NeedsAnswer: "answer",
		attention.StoppedOnError: "error", attention.WaitingForInput: "wait",
	}[a.State]
	return label + " " + Dur(a.For(now))
}

// styleAttention colours a state that waits for a person: a dialog or an
// error in bold red, a finished turn in yellow.
var styleAttention = map[attention.State]Style{
	attention.NeedsPermission: {attr: "1", fg: "31"},
	attention.NeedsAnswer:     {attr: "1", fg: "31"},
	attention.StoppedOnError:  {attr: "1", fg: "31"},
	attention.WaitingForInput: {fg: "33"},
}

func attentionStyle(r Row) *Style {
	if r.Attention == nil {
		return nil
	}
	if st, ok := styleAttention[r.Attention.State]; ok {
		return &st
	}
	return nil
}

// AttentionLine says in one line, for the live view's message line, what
// the selected session waits for: "ses_…: needs permission (Bash) for
// 4m12s, from hook; waited 6m30s in all"; "" when it waits for no one.
func AttentionLine(r Row, now time.Time) string {
	a := r.Attention
	if !a.NeedsPerson() {
		return ""
	}
	s := ShortID(r.ID) + ": " + a.Label()
	if a.Detail != "" {
		s += " (" + a.Detail + ")"
	}
	s += " for " + WaitDur(a.For(now))
	if a.Source != "" {
		s += ", from " + string(a.Source)
	}
	var total int64
	for _, ms := range a.WaitedMs {
		total += ms
	}
	if total > 0 {
		s += "; waited " + WaitDur(time.Duration(total)*time.Millisecond) + " in all"
	}
	return s
}

// WaitDur prints a wait: 30s, 4m12s under ten minutes, else as Dur.
func WaitDur(d time.Duration) string {
	if d >= time.Minute && d < 10*time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return Dur(d)
}

// Stamp returns rows with each attention's for_seconds counted at now,
// as --json prints them.
func Stamp(rows []Row, now time.Time) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		r.Attention = r.Attention.Stamp(now)
		out[i] = r
	}
	return out
}

// attentionBefore orders two sessions not ended by what they wait for:
// those that need a person first (needs_permission, needs_answer,
// stopped_on_error, then waiting_for_input), the longest waiting first
// within a kind; decided is false when neither comes first.
func attentionBefore(a, b Row) (before, decided bool) {
	ua, ub := a.Attention.Urgency(), b.Attention.Urgency()
	if ua != ub {
		return ua < ub, true
	}
	if ua < 4 && a.Attention.Since != b.Attention.Since {
		return a.Attention.Since < b.Attention.Since, true
	}
	return false, false
}

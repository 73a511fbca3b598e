package topview

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/renewal"
)

// Colour is how much of the table's styling an output takes.
type Colour int

const (
	// Plain: no escape sequences (not a terminal, TERM unset or dumb).
	Plain Colour = iota
	// Attributes: bold, faint and reverse, no colour (NO_COLOR).
	Attributes
	// Colours16: the sixteen ANSI colours.
	Colours16
	// Colours256: every style as written; the live view's renderer takes
	// it down to what the terminal has.
	Colours256
)

// Style is one SGR style of the table.
type Style struct {
	attr, fg, fg16 string // fg16: fg in the sixteen colours, when fg is not
}

// Styles of the table, as Lip Gloss writes them in the live view.
var (
	StyleHeader   = Style{attr: "1"}
	styleColumns  = Style{attr: "1"}
	StyleSelected = Style{attr: "7"}
	StyleEnded    = Style{attr: "2"}
	styleLevel    = map[string]Style{
		"low":      {fg: "32"},
		"moderate": {fg: "33"},
		"high":     {fg: "38;5;208", fg16: "91"},
		"critical": {attr: "1", fg: "31"},
	}
)

// Render wraps s in the style, as much of it as c takes.
func (st Style) Render(s string, c Colour) string {
	var codes []string
	if c >= Attributes && st.attr != "" {
		codes = append(codes, st.attr)
	}
	switch {
	case c == Colours16 && st.fg16 != "":
		codes = append(codes, st.fg16)
	case c >= Colours16 && st.fg != "":
		codes = append(codes, st.fg)
	}
	if len(codes) == 0 {
		return s
	}
	return "\x1b[" + strings.Join(codes, ";") + "m" + s + "\x1b[m"
}

// ColourFor is the colour an output takes: none unless it is a terminal
// with a TERM other than dumb; attributes only under NO_COLOR; 256
// colours where TERM or COLORTERM says so, else sixteen.
func ColourFor(terminal bool, getenv func(string) string) Colour {
	term := getenv("TERM")
	switch {
	case !terminal || term == "" || term == "dumb":
		return Plain
	case getenv("NO_COLOR") != "":
		return Attributes
	}
	switch strings.ToLower(getenv("COLORTERM")) {
	case "truecolor", "24bit", "yes", "true":
		return Colours256
	}
	if strings.HasSuffix(term, "256color") || strings.HasSuffix(term, "direct") ||
		strings.HasPrefix(term, "tmux") || strings.HasPrefix(term, "screen") {
		return Colours256
	}
	return Colours16
}

// wideAt is the terminal width from which the wide layout (tokens and
// window, renewal, folder) is used, and attentionAt the one from which
// it adds an attention column with the detail; below it, the activity
// column says what a session waits for.
const (
	wideAt      = 150
	attentionAt = 180
)

// attentionWidth is the wide layout's attention column.
const attentionWidth = 24

// column is one table column: its title and width (0: the rest).
type column struct {
	title string
	width int
	cell  func(r Row, now time.Time, width int) (text string, style *Style)
}

func columns(width int) []column {
	id := column{"ID", 12, func(r Row, _ time.Time, _ int) (string, *Style) { return ShortID(r.ID), nil }}
	harness := column{"HARNESS", 8, func(r Row, _ time.Time, _ int) (string, *Style) { return orDash(r.Harness), nil }}
	state := column{"STATE", 9, func(r Row, _ time.Time, _ int) (string, *Style) {
		s := r.DisplayState()
		if r.RenewalPending && s != "renewing" {
			s += "*"
		}
		return s, nil
	}}
	up := column{"UP", 5, func(r Row, now time.Time, _ int) (string, *Style) { return Uptime(r, now), nil }}
	activity := column{"ACTIVITY", 10, func(r Row, now time.Time, _ int) (string, *Style) {
		if s := attentionShort(r, now); s != "" {
			return s, attentionStyle(r)
		}
		return ActivityText(r, now), nil
	}}
	frames := column{"FR", 3, func(r Row, _ time.Time, _ int) (string, *Style) { return fmt.Sprint(r.Frames), nil }}
	last := column{"LAST EVENT", 0, func(r Row, now time.Time, _ int) (string, *Style) { return LastText(r, now), nil }}
	if width < wideAt {
		last.cell = func(r Row, now time.Time, _ int) (string, *Style) {
			r.LastEvent = shortEvent(r.LastEvent)
			return LastText(r, now), nil
		}
		return []column{id, harness, state, up, activity, frames,
			{"PRESSURE", 12, pressureCell(5, false)}, last}
	}
	frames.title, frames.width = "FRAMES", 6
	harness.width = 9
	up.width = 6
	activity.width = 11
	last.width = 28
	lead := []column{id, harness, state, up, activity, frames}
	if width >= attentionAt {
		activity.cell = func(r Row, now time.Time, _ int) (string, *Style) { return ActivityText(r, now), nil }
		attn := column{"ATTENTION", attentionWidth, func(r Row, now time.Time, _ int) (string, *Style) {
			return AttentionText(r, now), attentionStyle(r)
		}}
		lead = []column{id, harness, state, up, attn, activity, frames}
	}
	return append(lead,
		column{"CONTEXT PRESSURE", 37, pressureCell(12, true)},
		column{"RENEWAL", renewalWidth, func(r Row, _ time.Time, _ int) (string, *Style) { return RenewalText(r), nil }},
		last,
		column{"FOLDER", 0, func(r Row, _ time.Time, w int) (string, *Style) {
			if n := Width(r.Cwd); n > w {
				return TruncateLeft(r.Cwd, n-w+1, "…"), nil
			}
			return orDash(r.Cwd), nil
		}},
	)
}

// shortEvent names an event in fewer cells for the narrow layout.
func shortEvent(ev string) string {
	if rest, ok := strings.CutPrefix(ev, "session."); ok {
		return rest
	}
	switch ev {
	case "context.pressure_observed":
		return "pressure"
	case "context.compacted":
		return "compacted"
	case "supervisor.tick":
		return "tick"
	case "capability.degraded":
		return "degraded"
	case "receipt.gap_detected":
		return "receipt.gap"
	}
	return ev
}

// pressureCell draws the gauge: a bar of bar cells filled to the
// percentage, the percentage, and (wide) the level and tokens/window.
func pressureCell(bar int, wide bool) func(Row, time.Time, int) (string, *Style) {
	return func(r Row, _ time.Time, _ int) (string, *Style) {
		p := r.Pressure
		if p == nil {
			return "-", nil
		}
		text := Gauge(p.Percent, bar) + fmt.Sprintf(" %3.0f%%", p.Percent)
		if wide {
			text += fmt.Sprintf(" %-8s %s/%s", p.Level, Tokens(p.Tokens), Tokens(p.Window))
		} else {
			text += " " + levelMark(p.Level)
		}
		st, ok := styleLevel[p.Level]
		if !ok {
			return text, nil
		}
		return text, &st
	}
}

// levelMark is the one-letter level the narrow layout prints after the
// gauge, so that the level reads without colour too.
func levelMark(level string) string {
	if level == "" {
		return "?"
	}
	return strings.ToUpper(level[:1])
}

// Gauge is a bar of width cells, filled to percent.
func Gauge(percent float64, width int) string {
	filled := int(percent/100*float64(width) + 0.5)
	filled = max(0, min(width, filled))
	return strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
}

// Table renders the header row and one line per row, each exactly width
// cells wide, styled as c takes. selected is the index of the
// highlighted row (-1: none).
func Table(rows []Row, now time.Time, width, selected int, c Colour) []string {
	cols := withMachine(withCost(columns(width), rows), rows)
	fixed := 0
	for _, col := range cols {
		fixed += col.width + 1
	}
	rest := max(width-fixed, 8)
	lines := make([]string, 0, len(rows)+1)
	var hdr strings.Builder
	for i, col := range cols {
		hdr.WriteString(Fit(col.title, widthOf(col, rest)))
		if i < len(cols)-1 {
			hdr.WriteByte(' ')
		}
	}
	lines = append(lines, styleColumns.Render(Fit(hdr.String(), width), c))
	for i, r := range rows {
		var b strings.Builder
		left := width // cells left on the line: a line wider is cut there
		for j, col := range cols {
			if left <= 0 {
				break
			}
			w := widthOf(col, rest)
			text, st := col.cell(r, now, w)
			cell := Fit(text, w)
			if w > left {
				cell = cut(cell, left)
			}
			left -= Width(cell)
			if st != nil && i != selected && !r.Ended() {
				cell = st.Render(cell, c)
			}
			b.WriteString(cell)
			if j < len(cols)-1 && left > 0 {
				b.WriteByte(' ')
				left--
			}
		}
		line := b.String() + strings.Repeat(" ", max(left, 0))
		switch {
		case i == selected:
			line = StyleSelected.Render(line, c)
		case r.Ended():
			line = StyleEnded.Render(line, c)
		}
		lines = append(lines, line)
	}
	return lines
}

func widthOf(c column, rest int) int {
	if c.width == 0 {
		return rest
	}
	return c.width
}

// ShortID is the display form of a session id (sessionview.Short, as
// the other human views print it).
func ShortID(id string) string { return sessionview.Short(id) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Uptime is how long the session has run (until it ended).
func Uptime(r Row, now time.Time) string {
	if r.StartedAt == nil {
		return "-"
	}
	end := now
	if r.EndedAt != nil {
		end = *r.EndedAt
	}
	return Dur(end.Sub(*r.StartedAt))
}

// ActivityText is "active 3s" or "idle 5m": the activity of the last tick
// and the time since the harness last wrote output.
func ActivityText(r Row, now time.Time) string {
	if r.Ended() {
		return "-"
	}
	if r.State == "paused" {
		return "stopped"
	}
	if r.Activity == "" {
		return "-"
	}
	if r.OutputAt == nil {
		return r.Activity
	}
	return r.Activity + " " + Dur(now.Sub(*r.OutputAt))
}

// LastText is how long ago the newest event was recorded, and the event.
func LastText(r Row, now time.Time) string {
	if r.LastEvent == "" {
		return "-"
	}
	if r.LastEventAt == nil {
		return r.LastEvent
	}
	return Dur(now.Sub(*r.LastEventAt)) + " " + r.LastEvent
}

// RenewalText is the latest renewal's state while it runs, else
// "payload pending" when payloads wait for the next renewal, else what
// the renewal policy says last: that it gave up ("gave up: futile"), or
// that the latest renewal was its own ("policy 71% · 2/3 h": the
// pressure that triggered it and this hour's renewals of the limit);
// else the latest renewal's outcome, else the attached policy client's
// threshold ("autorenew 70%").
func RenewalText(r Row) string {
	p := r.Policy
	switch {
	case r.DisplayState() == "renewing":
		return r.Renewal
	case r.RenewalPending:
		return "payload pending"
	case p.ReportIsLatest() && p.Report.GaveUp():
		return "gave up: " + reasonWords(p.Report.Reason)
	case p != nil && p.Renewal != nil:
		if r.Renewal != "" && r.Renewal != "delivered" {
			return "policy " + r.Renewal
		}
		return PolicyRenewalText(*p.Renewal)
	case p != nil && p.Client != nil:
		return "autorenew " + p.Client.Threshold
	case r.Renewal == "":
		return "-"
	}
	return r.Renewal
}

// renewalWidth is the wide layout's renewal column.
const renewalWidth = 18

// PolicyRenewalText is a policy renewal in the renewal column: "policy
// 71% · 2/3 h" (the trigger, as a percentage or in tokens, and the
// renewals this hour of the limit; "policy 152k 2/3 h" where the dot
// does not fit).
func PolicyRenewalText(ev renewal.Policy) string {
	s := "policy"
	switch {
	case ev.TriggerPercent > 0:
		s += fmt.Sprintf(" %.0f%%", ev.TriggerPercent)
	case ev.TriggerTokens > 0:
		s += " " + Tokens(ev.TriggerTokens)
	}
	if ev.PerHour > 0 {
		limit := fmt.Sprintf("%d/%d h", ev.ThisHour, ev.PerHour)
		if withDot := s + " · " + limit; Width(withDot) <= renewalWidth {
			return withDot
		}
		s += " " + limit
	}
	return s
}

// reasonWords names a policy report's reason in the nine cells the
// renewal column leaves after "gave up: " (--json has the reason as
// recorded, and its detail).
func reasonWords(reason string) string {
	switch reason {
	case "session_limit":
		return "hour cap"
	case "machine_limit":
		return "busy"
	case "no_safe_moment":
		return "no pause"
	case "handoff_failed":
		return "handoff"
	case "client_exited":
		return "exited"
	}
	return strings.ReplaceAll(reason, "_", " ")
}

// Dur prints a duration in at most four or five cells: 45s, 12m, 3h07, 2d5h.
func Dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// Tokens prints a token count: 980, 15.2k, 156k, 1.0M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// WithHome returns rows with home at the start of a folder written ~.
func WithHome(rows []Row, home string) []Row {
	if home == "" || home == "/" {
		return rows
	}
	out := make([]Row, len(rows))
	for i, r := range rows {
		if r.Cwd == home {
			r.Cwd = "~"
		} else if rest, ok := strings.CutPrefix(r.Cwd, strings.TrimSuffix(home, "/")+"/"); ok {
			r.Cwd = "~/" + rest
		}
		out[i] = r
	}
	return out
}

// Once renders the table of `top --once`: a title line, the header,
// one line per row and, when a session has usage, the total line
// (TotalLine), width cells wide, styled as c takes; folders under home
// start with ~.
func Once(rows []Row, now time.Time, width int, root, home string, c Colour) string {
	rows = WithHome(rows, home)
	var b strings.Builder
	b.WriteString(StyleHeader.Render(Title(rows, root), c))
	b.WriteByte('\n')
	if len(rows) == 0 {
		b.WriteString("no sessions\n")
		return b.String()
	}
	lines := Table(rows, now, width, -1, c)
	if total, ok := TotalLine(rows, width, c); ok {
		lines = append(lines, total)
	}
	for _, l := range lines {
		b.WriteString(trailingSpace().ReplaceAllString(l, "$1"))
		b.WriteByte('\n')
	}
	return b.String()
}

// trailingSpace matches the padding at the end of a line, before the
// escape sequences that close its styles (compiled on first use, not at
// every lifeloop start).
var trailingSpace = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(` +((?:\x1b\[[0-9;]*m)*)$`)
})

// Title is the first line of top: how many sessions are live and ended,
// and the state directory (the cost of every session shown together is
// the table's total line: TotalLine).
func Title(rows []Row, root string) string {
	live := 0
	for _, r := range rows {
		if !r.Ended() {
			live++
		}
	}
	return fmt.Sprintf("lifeloop top: %d live, %d ended · %s", live, len(rows)-live, root)
}

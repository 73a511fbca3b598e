package top

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lifeloop/lifeloop/internal/sessionview"
)

// Styles. Colour is written as ANSI and taken down to what the terminal
// supports (none when it has no colour, NO_COLOR is set or the output is
// not a terminal) by the writer: the program's renderer, or
// colorprofile.Writer for --once.
var (
	styleHeader   = lipgloss.NewStyle().Bold(true)
	styleColumns  = lipgloss.NewStyle().Bold(true)
	styleSelected = lipgloss.NewStyle().Reverse(true)
	styleEnded    = lipgloss.NewStyle().Faint(true)
	styleHelp     = lipgloss.NewStyle().Faint(true)
	styleMessage  = lipgloss.NewStyle().Bold(true)
	styleLevel    = map[string]lipgloss.Style{
		"low":      lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		"moderate": lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		"high":     lipgloss.NewStyle().Foreground(lipgloss.Color("208")),
		"critical": lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
	}
)

// wideAt is the terminal width from which the wide layout (tokens and
// window, renewal, folder) is used.
const wideAt = 150

// column is one table column: its title and width (0: the rest).
type column struct {
	title string
	width int
	cell  func(r Row, now time.Time, width int) (text string, style *lipgloss.Style)
}

func columns(width int) []column {
	id := column{"ID", 12, func(r Row, _ time.Time, _ int) (string, *lipgloss.Style) { return ShortID(r.ID), nil }}
	harness := column{"HARNESS", 8, func(r Row, _ time.Time, _ int) (string, *lipgloss.Style) { return orDash(r.Harness), nil }}
	state := column{"STATE", 9, func(r Row, _ time.Time, _ int) (string, *lipgloss.Style) {
		s := r.DisplayState()
		if r.RenewalPending && s != "renewing" {
			s += "*"
		}
		return s, nil
	}}
	up := column{"UP", 5, func(r Row, now time.Time, _ int) (string, *lipgloss.Style) { return Uptime(r, now), nil }}
	activity := column{"ACTIVITY", 10, func(r Row, now time.Time, _ int) (string, *lipgloss.Style) { return ActivityText(r, now), nil }}
	frames := column{"FR", 3, func(r Row, _ time.Time, _ int) (string, *lipgloss.Style) { return fmt.Sprint(r.Frames), nil }}
	last := column{"LAST EVENT", 0, func(r Row, now time.Time, _ int) (string, *lipgloss.Style) { return LastText(r, now), nil }}
	if width < wideAt {
		last.cell = func(r Row, now time.Time, _ int) (string, *lipgloss.Style) {
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
	return []column{id, harness, state, up, activity, frames,
		{"CONTEXT PRESSURE", 37, pressureCell(12, true)},
		{"RENEWAL", 16, func(r Row, _ time.Time, _ int) (string, *lipgloss.Style) { return RenewalText(r), nil }},
		last,
		{"FOLDER", 0, func(r Row, _ time.Time, w int) (string, *lipgloss.Style) {
			if ansi.StringWidth(r.Cwd) > w {
				return ansi.TruncateLeft(r.Cwd, ansi.StringWidth(r.Cwd)-w+1, "…"), nil
			}
			return orDash(r.Cwd), nil
		}},
	}
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
func pressureCell(bar int, wide bool) func(Row, time.Time, int) (string, *lipgloss.Style) {
	return func(r Row, _ time.Time, _ int) (string, *lipgloss.Style) {
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
// cells wide. selected is the index of the highlighted row (-1: none).
func Table(rows []Row, now time.Time, width, selected int) []string {
	cols := columns(width)
	fixed := 0
	for _, c := range cols {
		fixed += c.width + 1
	}
	rest := max(width-fixed, 8)
	lines := make([]string, 0, len(rows)+1)
	var hdr strings.Builder
	for i, c := range cols {
		w := c.width
		if w == 0 {
			w = rest
		}
		hdr.WriteString(fit(c.title, w))
		if i < len(cols)-1 {
			hdr.WriteByte(' ')
		}
	}
	lines = append(lines, styleColumns.Render(fit(hdr.String(), width)))
	for i, r := range rows {
		var b strings.Builder
		for j, c := range cols {
			w := c.width
			if w == 0 {
				w = rest
			}
			text, st := c.cell(r, now, w)
			cell := fit(text, w)
			if st != nil && i != selected && !r.Ended() {
				cell = st.Render(cell)
			}
			b.WriteString(cell)
			if j < len(cols)-1 {
				b.WriteByte(' ')
			}
		}
		line := fitANSI(b.String(), width)
		switch {
		case i == selected:
			line = styleSelected.Render(line)
		case r.Ended():
			line = styleEnded.Render(line)
		}
		lines = append(lines, line)
	}
	return lines
}

// fit pads or cuts plain text to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// fitANSI is fit for text that may hold escape sequences.
func fitANSI(s string, w int) string {
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "")
	}
	return s + strings.Repeat(" ", w-n)
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
// "payload pending" when payloads wait for the next renewal, else the
// latest renewal's outcome.
func RenewalText(r Row) string {
	switch {
	case r.DisplayState() == "renewing":
		return r.Renewal
	case r.RenewalPending:
		return "payload pending"
	case r.Renewal == "":
		return "-"
	}
	return r.Renewal
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

// withHome returns rows with home at the start of a folder written ~.
func withHome(rows []Row, home string) []Row {
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

// Once renders the table for `top --once`: a title line, the header and
// one line per row, width cells wide; folders under home start with ~.
func Once(rows []Row, now time.Time, width int, root, home string) string {
	rows = withHome(rows, home)
	var b strings.Builder
	b.WriteString(styleHeader.Render(title(rows, root)))
	b.WriteByte('\n')
	if len(rows) == 0 {
		b.WriteString("no sessions\n")
		return b.String()
	}
	for _, l := range Table(rows, now, width, -1) {
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

func title(rows []Row, root string) string {
	live := 0
	for _, r := range rows {
		if !r.Ended() {
			live++
		}
	}
	return fmt.Sprintf("lifeloop top: %d live, %d ended · %s", live, len(rows)-live, root)
}

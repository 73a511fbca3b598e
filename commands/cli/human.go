package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
)

// The reading commands (sessions, receipts, status) print for a person
// when standard output is a terminal, and exactly what they printed before
// (JSON, NDJSON, plain text) when it is not or with --json, so scripts and
// pipes see no change.

// stdoutIsTerminal reports whether the process's standard output is a
// terminal.
func stdoutIsTerminal() bool { return term.IsTerminal(int(os.Stdout.Fd())) }

// human reports whether e prints for a person: its output is a terminal.
func (e *env) human() bool { return e.OutTerminal }

// painter colours text for a terminal, or leaves it alone when colour is
// off: not a terminal, NO_COLOR set (https://no-color.org) or TERM=dumb.
type painter struct{ on bool }

func (e *env) painter() painter {
	return painter{on: e.OutTerminal && e.Getenv("NO_COLOR") == "" && e.Getenv("TERM") != "dumb"}
}

// ANSI SGR codes used by the views.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
)

func (p painter) paint(code, s string) string {
	if !p.on || code == "" || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// statusCode is the colour of a receipt, payload or session status word.
// Unknown words (a state added later) stay plain.
func statusCode(s string) string {
	switch s {
	case "failed", "rejected", "aborted", "lost":
		return sgrRed
	case "degraded", "aborting", "paused", "pending_delivery", "stopping", "relaunching", "undelivered":
		return sgrYellow
	case "delivered", "running", "completed":
		return sgrGreen
	case "skipped":
		return sgrDim
	}
	return ""
}

// levelCode is the colour of a context pressure level.
func levelCode(s string) string {
	switch s {
	case "critical", "high":
		return sgrRed
	case "moderate":
		return sgrYellow
	}
	return ""
}

func (p painter) status(s string) string { return p.paint(statusCode(s), s) }

func (p painter) level(s string) string { return p.paint(levelCode(s), s) }

// humanDuration prints d the way a person reads it: 45s, 12m03s, 3h04m,
// 2d05h.
func humanDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
	default:
		return fmt.Sprintf("%dd%02dh", s/86400, (s%86400)/3600)
	}
}

// shortPath replaces the home folder with ~ and keeps the last parts of a
// long path.
func shortPath(p, home string, max int) string {
	if p == "" {
		return "-"
	}
	if home != "" && (p == home || strings.HasPrefix(p, home+string(filepath.Separator))) {
		p = "~" + p[len(home):]
	}
	if r := []rune(p); len(r) > max {
		p = "…" + string(r[len(r)-max+1:])
	}
	return p
}

// pressureText is "high 80.5%" (level and percent), "-" when unknown.
func pressureText(p *sessionview.Pressure, paint painter) string {
	if p == nil {
		return "-"
	}
	lvl := p.Level
	if lvl == "" {
		lvl = "?"
	}
	if p.Percent < 0 {
		return paint.level(lvl)
	}
	return paint.level(lvl) + " " + strconv.FormatFloat(p.Percent, 'f', -1, 64) + "%"
}

// writeSessionsHuman prints the sessions table: id (short), harness,
// state, what it waits for (attention: only when a session's ledger
// says), started (local time), duration, frames, last pressure and cwd.
// hidden is the number of sessions left out, told in a last line with the
// flag that shows them.
func writeSessionsHuman(w io.Writer, sums []sessionview.Summary, hidden int, now time.Time, home string, paint painter) error {
	t := table{paint: paint}
	withAttention := slices.ContainsFunc(sums, func(s sessionview.Summary) bool { return s.AttentionShown() != nil })
	head := []cell{{"ID", sgrBold}, {"HARNESS", sgrBold}, {"STATE", sgrBold}, {"ATTENTION", sgrBold}, {"STARTED", sgrBold}, {"DURATION", sgrBold}, {"FRAMES", sgrBold}, {"PRESSURE", sgrBold}, {"CWD", sgrBold}}
	if !withAttention {
		head = slices.Delete(head, 3, 4)
	}
	t.row(head)
	for _, s := range sums {
		started, dur := "-", "-"
		if s.Started != nil {
			started = s.Started.In(time.Local).Format("2006-01-02 15:04")
			dur = humanDuration(s.Duration(now))
		}
		pressure := cell{text: "-"}
		if p := s.Pressure; p != nil {
			pressure = cell{text: pressureText(p, painter{}), code: levelCode(p.Level)}
		}
		row := []cell{
			{text: sessionview.Short(s.ID)}, {text: orDash(s.Harness)}, {text: s.State, code: statusCode(s.State)},
			attentionCell(s.AttentionShown(), now), {text: started}, {text: dur}, {text: strconv.Itoa(s.Frames)}, pressure, {text: shortPath(s.Cwd, home, 40)},
		}
		if !withAttention {
			row = slices.Delete(row, 3, 4)
		}
		t.row(row)
	}
	if err := t.write(w); err != nil {
		return err
	}
	if hidden > 0 {
		_, err := fmt.Fprintf(w, "%s\n", paint.paint(sgrDim, fmt.Sprintf("(%d more not shown; --all lists every session)", hidden)))
		return err
	}
	return nil
}

// attentionCell is what a session waits for, as top's attention column
// says it ("permission 4m12s · Bash", "waiting 30s"), red for a dialog
// or an error, yellow for a finished turn; "-" when not known.
func attentionCell(a *sessionview.Attention, now time.Time) cell {
	c := cell{text: topview.AttentionText(topview.Row{Attention: a}, now)}
	switch {
	case a.Urgency() < 3:
		c.code = sgrRed
	case a.Urgency() == 3:
		c.code = sgrYellow
	}
	return c
}

// cell is one table cell: its text and the SGR code it is painted with.
type cell struct{ text, code string }

// table aligns cells on their visible width (colour codes take no room on
// screen, which text/tabwriter cannot know).
type table struct {
	paint painter
	rows  [][]cell
}

func (t *table) row(c []cell) { t.rows = append(t.rows, c) }

func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			line.WriteString(t.paint.paint(c.code, c.text))
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// receiptLine is one receipt on one line for a person: time, sequence,
// event, status, source and the summary that matters for the event.
func receiptLine(r contract.LifecycleReceipt, paint painter) string {
	at := time.Unix(r.AtEpochS, 0).In(time.Local).Format("15:04:05")
	seq := "-"
	if r.Sequence != nil {
		seq = "#" + strconv.FormatUint(*r.Sequence, 10)
	}
	status := string(r.Status)
	line := fmt.Sprintf("%s %5s  %-26s %s%s %-10s %s",
		paint.paint(sgrDim, at), seq, string(r.Event), paint.status(status),
		strings.Repeat(" ", max(0, 9-len(status))), sessionview.Source(r), receiptSummary(r, paint))
	return strings.TrimRight(line, " ")
}

// receiptSummary is the part of a receipt that matters for its event.
func receiptSummary(r contract.LifecycleReceipt, paint painter) string {
	ts := r.TelemetrySummary
	str := func(k string) string { s, _ := ts[k].(string); return s }
	num := func(k string) (string, bool) {
		if v, ok := sessionview.Number(ts[k]); ok {
			return strconv.FormatFloat(v, 'f', -1, 64), true
		}
		return "", false
	}
	var parts []string
	switch {
	case r.Event.IsFrame():
		p := "frame " + sessionview.FrameID(r)
		if m := str("model"); m != "" {
			p += " model " + m
		}
		if sr := str("stop_reason"); sr != "" {
			p += " (" + sr + ")"
		}
		parts = append(parts, p)
	case r.Event == contract.EventContextPressureObserved:
		p := paint.level(str("level"))
		if pc, ok := num("percent"); ok {
			p += " " + pc + "%"
		}
		tok, ok1 := num("tokens")
		win, ok2 := num("window")
		if ok1 && ok2 {
			p += " (" + tok + "/" + win + " tokens)"
		}
		if prev := str("previous_level"); prev != "" {
			p += " from " + prev
		}
		parts = append(parts, strings.TrimSpace(p))
	case r.Event == contract.EventContextCompacted:
		pre, ok1 := num("pre_tokens")
		post, ok2 := num("post_tokens")
		p := "compacted"
		if ok1 && ok2 {
			p += " " + pre + " → " + post + " tokens"
		}
		if t := str("trigger"); t != "" {
			p += " (" + t + ")"
		}
		parts = append(parts, p)
	case r.Event == contract.EventSessionStarted:
		if pid, ok := num("pid"); ok {
			parts = append(parts, "pid "+pid)
		}
		if r.HarnessSessionID != nil {
			parts = append(parts, "harness session "+*r.HarnessSessionID)
		}
	case r.Event == contract.EventSessionStarting:
		if a := str("argv0"); a != "" {
			parts = append(parts, a)
		}
	case r.Event == contract.EventSessionEnded || r.Event == contract.EventSessionEnding:
		if code, ok := num("exit_status"); ok {
			p := "exit " + code
			if o := str("outcome"); o != "" {
				p += " " + o
			}
			if why := str("reason"); why != "" {
				p += " (" + why + ")"
			}
			parts = append(parts, p)
		} else if why := str("reason"); why != "" {
			parts = append(parts, why)
		}
	case r.Event == contract.EventCapabilityDegraded:
		for _, d := range r.CapabilityDegradations {
			parts = append(parts, fmt.Sprintf("%s %s → %s", d.Capability, d.PreviousSupport, d.CurrentSupport))
		}
	}
	for _, p := range r.PayloadReceipts {
		parts = append(parts, fmt.Sprintf("payload %s → %s %s", p.PayloadID, p.Placement, paint.status(string(p.Status))))
	}
	if r.FailureClass != nil {
		f := string(*r.FailureClass)
		if r.RetryClass != nil {
			f += ", retry: " + string(*r.RetryClass)
		}
		parts = append(parts, paint.paint(sgrRed, f))
	}
	for _, w := range r.Warnings {
		parts = append(parts, paint.paint(sgrYellow, "warning "+w.Code))
	}
	return strings.Join(parts, " · ")
}

// writeStatusHuman prints the short status block of one session; orphans
// are the pids of its harness still running without a wrapper.
func writeStatusHuman(w io.Writer, s sessionview.Summary, orphans []int, now time.Time, home string, paint painter) error {
	return writeStatusBlock(w, s, nil, orphans, nil, now, home, paint)
}

// writeStatusBlock is writeStatusHuman with the renewal policy's state
// (autorenew.json; nil when no policy client follows the session).
func writeStatusBlock(w io.Writer, s sessionview.Summary, att *control.Attention, orphans []int, ar *autorenew.State, now time.Time, home string, paint painter) error {
	var b strings.Builder
	row := func(k, v string) { fmt.Fprintf(&b, "%s %s\n", paint.paint(sgrBold, fmt.Sprintf("%-10s", k)), v) }
	row("session", s.ID)
	state := paint.status(s.State)
	switch {
	case s.Live:
		state += " (live)"
	case !s.Terminal:
		state += " (no live wrapper)"
	}
	row("state", state)
	if len(orphans) > 0 {
		row("orphan", paint.paint(sgrRed, orphansText(s.ID, orphans)))
	}
	harness := orDash(s.Harness)
	if s.HarnessVersion != "" {
		harness += " version " + s.HarnessVersion
	}
	if s.HarnessSession != "" {
		harness += " session " + s.HarnessSession
	}
	row("harness", harness)
	for _, d := range s.Drift {
		row("drift", paint.paint(sgrYellow, d))
	}
	if s.Pid > 0 {
		row("pid", strconv.Itoa(s.Pid))
	}
	if s.Started != nil {
		label := "uptime"
		if s.Terminal {
			label = "ran"
		}
		row(label, humanDuration(s.Duration(now))+" (since "+s.Started.In(time.Local).Format("2006-01-02 15:04:05")+")")
	}
	if s.Live {
		act := orDash(s.Activity)
		if s.Idle > 0 {
			act += ", no output for " + humanDuration(s.Idle)
		}
		row("activity", act)
		for _, h := range s.Holding {
			row("holding", paint.paint(sgrYellow, h))
		}
		if att != nil {
			row("attention", att.String(now))
		}
	}
	if f := s.LastFrame; f != nil {
		frames := "1 frame"
		if s.Frames != 1 {
			frames = strconv.Itoa(s.Frames) + " frames"
		}
		row("last frame", fmt.Sprintf("%s (%s, %s ago) · %s", f.ID, f.Event, humanDuration(now.Sub(f.At)), frames))
	} else {
		row("last frame", "-")
	}
	if p := s.Pressure; p != nil {
		v := pressureText(p, paint)
		if p.Window > 0 {
			v += fmt.Sprintf(" (%d/%d tokens)", p.Tokens, p.Window)
		}
		row("pressure", v)
	} else {
		row("pressure", "-")
	}
	if u := s.Usage; u != nil {
		row("usage", u.Text())
	}
	switch r := s.Renewal; {
	case r == nil:
		row("renewal", "none")
	case r.Pending:
		v := paint.status(r.State) + " (pending"
		if len(r.PayloadIDs) > 0 {
			v += ": " + strings.Join(r.PayloadIDs, " ")
		}
		row("renewal", v+")")
	default:
		row("renewal", paint.status(r.State))
	}
	if ar != nil {
		row("autorenew", autorenewText(*ar, now, paint))
	}
	if ev := s.LastEvent; ev != nil {
		row("last event", fmt.Sprintf("#%d %s %s (%s ago)", ev.Sequence, ev.Event, paint.status(ev.Status), humanDuration(now.Sub(ev.At))))
	}
	if x := s.Exit; x != nil {
		v := strconv.Itoa(x.Code)
		if x.Outcome != "" {
			v += " " + x.Outcome
		}
		if x.Reason != "" {
			v += " (" + x.Reason + ")"
		}
		row("exit", v)
	}
	row("cwd", shortPath(s.Cwd, home, 60))
	_, err := io.WriteString(w, b.String())
	return err
}

// autorenewText is status's line of the renewal policy: "70 % · 1 of 3
// this hour · " and what it waits for, why it gave up, or its last
// renewal.
func autorenewText(st autorenew.State, now time.Time, paint painter) string {
	at := st.Threshold
	if p, ok := strings.CutSuffix(at, "%"); ok {
		at = p + " %"
	}
	parts := []string{at, fmt.Sprintf("%d of %d this hour", st.ThisHour, st.PerHour)}
	switch {
	case st.GaveUp != "":
		parts = append(parts, paint.paint(sgrYellow, "gave up ("+string(st.GaveUp)+"): "+st.GaveUpDetail))
	case st.Waiting != "":
		parts = append(parts, st.Waiting)
	case st.LastAt != nil:
		parts = append(parts, fmt.Sprintf("last renewal %s at %s %%, %s ago", st.LastResult, percentText(st.LastPercent), humanDuration(now.Sub(*st.LastAt))))
	default:
		parts = append(parts, "watching")
	}
	if st.Resume {
		parts = append(parts, "resume")
	}
	return strings.Join(parts, " · ")
}

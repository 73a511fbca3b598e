package topview

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
)

// costWidth is the cost column: "$123.45+?".
const costWidth = 9

// costColumn is the cost of a session's model calls: "?" when none is
// priced, never $0.00 for an unknown cost; "-" without calls.
var costColumn = column{"COST", costWidth, func(r Row, _ time.Time, _ int) (string, *Style) { return CostText(r), nil }}

// CostText is a row's cost as the cost column shows it.
func CostText(r Row) string {
	if s := r.Usage.CostText(); s != "" {
		return s
	}
	return "-"
}

// withCost puts the cost column after the frames' when a row has a
// cost to show (a session whose harness records no usage adds none).
func withCost(cols []column, rows []Row) []column {
	if !slices.ContainsFunc(rows, func(r Row) bool { return r.Usage != nil }) {
		return cols
	}
	i := slices.IndexFunc(cols, func(c column) bool { return c.title == "FRAMES" || c.title == "FR" })
	return slices.Insert(slices.Clone(cols), i+1, costColumn)
}

// Totals is the usage of the sessions top shows, together (`top --json
// --totals`' "totals"). Its tokens and cost are sessionview.Sum's: the
// cost is the priced part of every session's, nil when no call of any is
// priced (never 0 for an unknown cost), and the provenance joins every
// session's (native+estimated when one session's cost is native and
// another's estimated; +unknown when a call has no price). How much is
// unknown is counted in sessions: a dollar figure cannot be given to it.
type Totals struct {
	// Sessions is how many sessions are shown; WithUsage how many of
	// them have model calls.
	Sessions  int `json:"sessions"`
	WithUsage int `json:"sessions_with_usage"`
	// UnknownCost counts the sessions with calls whose cost is wholly or
	// partly unknown (a model no table prices): the figure leaves them
	// out, or their unpriced part.
	UnknownCost int `json:"unknown_cost_sessions"`
	sessionview.Usage
}

// TotalsOf is the usage of rows together.
func TotalsOf(rows []Row) Totals {
	t := Totals{Sessions: len(rows)}
	us := make([]*sessionview.Usage, 0, len(rows))
	for _, r := range rows {
		if r.Usage == nil || r.Usage.Calls == 0 {
			continue
		}
		t.WithUsage++
		if r.Usage.USD == nil || strings.Contains(r.Usage.Provenance, "unknown") {
			t.UnknownCost++
		}
		us = append(us, r.Usage)
	}
	if s := sessionview.Sum(us...); s != nil {
		t.Usage = *s
	}
	return t
}

// TotalLine is the table's last line when it has a cost column: the
// label, how many sessions it sums and how many of them have a cost
// not (wholly) priced, their tokens, then the total cost under the cost
// column and its provenance after it, width cells wide; ok is false when
// the table has no cost column (no session has usage).
func TotalLine(rows []Row, width int, c Colour) (line string, ok bool) {
	cols := withCost(columns(width), rows)
	at := 0 // the cells before the cost column
	for _, col := range cols {
		if col.title == costColumn.title {
			ok = true
			break
		}
		at += col.width + 1
	}
	if !ok {
		return "", false
	}
	t := TotalsOf(rows)
	label := fmt.Sprintf("TOTAL %d %s", t.Sessions, plural(t.Sessions, "session"))
	if t.UnknownCost > 0 {
		label += fmt.Sprintf(" · %d unpriced", t.UnknownCost)
	}
	label += fmt.Sprintf(" · %s tokens", Tokens(t.Total))
	cost := t.CostText()
	if cost == "" {
		cost = "-"
	}
	text := Fit(label, at-1) + " " + Fit(cost, costWidth) + " " + t.Provenance
	return StyleHeader.Render(Fit(text, width), c), true
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

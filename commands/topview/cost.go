package topview

import (
	"slices"
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

// TotalCost is the cost of rows' model calls together, as the title
// line ends with it ("" when no row has any).
func TotalCost(rows []Row) string {
	us := make([]*sessionview.Usage, 0, len(rows))
	for _, r := range rows {
		us = append(us, r.Usage)
	}
	t := sessionview.Sum(us...)
	if t == nil || t.Calls == 0 {
		return ""
	}
	return t.CostText() + " " + t.Provenance
}

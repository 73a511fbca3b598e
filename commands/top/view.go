// Package top is the live `lifeloop top`: a terminal UI over the rows
// commands/topview keeps current from the state directory, which renews,
// aborts, pauses and resumes the selected session through the same
// control-socket operations as the CLI commands. It is linked only into
// the lifeloop-top program; the table it draws, and the one `top --once`
// prints, is topview's.
package top

import (
	"time"

	"charm.land/lipgloss/v2"

	"github.com/lifeloop/lifeloop/commands/topview"
)

// Row is what top shows of one session (topview.Row).
type Row = topview.Row

// Pressure is a session's last observed context pressure.
type Pressure = topview.Pressure

// Source keeps the rows of a state directory current (topview.Source).
type Source = topview.Source

// Styles of the screen around the table (the table's own are
// topview's). Colour is written as ANSI and taken down to what the
// terminal supports by the program's renderer.
var (
	styleHeader  = lipgloss.NewStyle().Bold(true)
	styleHelp    = lipgloss.NewStyle().Faint(true)
	styleMessage = lipgloss.NewStyle().Bold(true)
)

// Table renders the header row and one line per row, each exactly width
// cells wide, with every style: the renderer takes them down to what the
// terminal has. selected is the index of the highlighted row (-1: none).
func Table(rows []Row, now time.Time, width, selected int) []string {
	return topview.Table(rows, now, width, selected, topview.Colours256)
}

// TotalLine is the line under the table that sums the cost of every
// session shown (topview.TotalLine), width cells wide; ok is false when
// no session has usage, and the table no cost column.
func TotalLine(rows []Row, width int) (line string, ok bool) {
	return topview.TotalLine(rows, width, topview.Colours256)
}

// fit pads or cuts plain text to exactly w cells.
func fit(s string, w int) string { return topview.Fit(s, w) }

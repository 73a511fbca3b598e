package top

import (
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/commands/topview"
)

// TestTotalLineUnderTheRows: with usage, the live view draws the total
// line right under the rows it shows, on every screen size and as the
// selection scrolls (the selected row stays visible), and the screen
// keeps its size; the filter narrows the total to the rows it keeps.
func TestTotalLineUnderTheRows(t *testing.T) {
	var rows []Row
	for i := range 40 {
		usd := 0.25
		u := &sessionview.Usage{Calls: 1, Total: 1000, USD: &usd, Provenance: "native"}
		harness := "pi"
		if i%10 == 9 {
			harness, u = "claude", &sessionview.Usage{Calls: 1, Total: 1000, Provenance: "unknown"}
		}
		rows = append(rows, Row{ID: "ses_" + strconv.Itoa(1000+i), Harness: harness, State: "running", StartedAt: ago(time.Duration(i) * time.Minute), Usage: u})
	}
	m := NewModel(Config{Now: func() time.Time { return fixedNow }}, rows)
	for _, size := range []struct{ w, h int }{{80, 12}, {160, 48}, {200, 60}, {40, 6}} {
		m.Update(tea.WindowSizeMsg{Width: size.w, Height: size.h})
		for range 45 {
			m.Update(key("j"))
			screen := m.Render()
			checkScreen(t, screen, size.w, size.h)
			lines := strings.Split(ansi.Strip(screen), "\n")
			n := slicesIndexPrefix(lines, "TOTAL ")
			if n < 0 || !strings.HasPrefix(lines[n-1], "ses_") || strings.HasPrefix(lines[n+1], "ses_") {
				t.Fatalf("%dx%d: no total line right under the rows:\n%s", size.w, size.h, strings.Join(lines, "\n"))
			}
			if !strings.Contains(strings.Join(lines[:n], "\n"), topview.ShortID(m.rows[m.cursor].ID)) {
				t.Fatalf("%dx%d: the selected row %d is not on screen:\n%s", size.w, size.h, m.cursor, strings.Join(lines, "\n"))
			}
			if size.w >= 80 && !strings.HasPrefix(lines[n], "TOTAL 40 sessions · 4 unpriced · 40.0k tokens ") {
				t.Fatalf("%dx%d: total line %q", size.w, size.h, lines[n])
			}
		}
		m.move(-len(rows))
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 20})
	press(m, "/")
	typeText(m, "claude")
	press(m, "enter")
	if s := ansi.Strip(m.Render()); !strings.Contains(s, "TOTAL 4 sessions · 4 unpriced · 4.0k tokens ") || !strings.Contains(s, "?         unknown") {
		t.Fatalf("filtered to claude, the total is not the four unpriced sessions':\n%s", s)
	}
}

// slicesIndexPrefix is the index of the first line starting with p, -1
// when none does.
func slicesIndexPrefix(lines []string, p string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, p) {
			return i
		}
	}
	return -1
}

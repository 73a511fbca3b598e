package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/fleet"
)

// TestFleetTableTotal: the fleet table ends with a total line when a
// session's stream carried usage — the sessions it sums, their tokens,
// the priced part of their cost with the provenances joined, and how
// many have a cost no table prices (never a dollar figure for those);
// none when no stream carried usage.
func TestFleetTableTotal(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	usage := func(total int, cost map[string]any) map[string]any {
		return map[string]any{"calls": 1.0, "tokens": map[string]any{"total": float64(total)}, "cost": cost}
	}
	rows := []fleet.Row{
		{Machine: "m1", Session: "s1", State: "RUNNING", LastEventAt: now, Usage: usage(1000, map[string]any{"usd": 0.25, "provenance": "estimated"})},
		{Machine: "m2", Session: "s2", State: "COMPLETED", LastEventAt: now, Closed: true, Usage: usage(2500, map[string]any{"usd": 0.5, "provenance": "native"})},
		{Machine: "m2", Session: "s3", State: "RUNNING", LastEventAt: now, Usage: usage(500, map[string]any{"provenance": "unknown"})},
		{Machine: "m3", Session: "s4", State: "RUNNING", LastEventAt: now},
	}
	var b bytes.Buffer
	if err := writeFleetTable(&b, rows, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	last := strings.Fields(lines[len(lines)-1])
	want := "TOTAL 4 sessions · 4.0k tokens · 1 unpriced $0.75+? native+estimated+unknown"
	if got := strings.Join(last, " "); got != want {
		t.Fatalf("total line %q, want %q\n%s", got, want, b.String())
	}
	b.Reset()
	if err := writeFleetTable(&b, rows[3:], now); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "TOTAL") {
		t.Fatalf("a total with no usage in any stream:\n%s", b.String())
	}
}

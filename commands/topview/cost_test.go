package topview

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
)

// TestCostColumnAndTotal: once a session has usage, top shows a cost
// column ("?" for an unpriced session, never $0.00; "-" without calls)
// and the title ends with the total and its provenance.
func TestCostColumnAndTotal(t *testing.T) {
	usd := 0.5
	rows := []Row{
		{ID: "ses_00PRICED", State: "running", Usage: &sessionview.Usage{Calls: 2, USD: &usd, Provenance: "estimated"}},
		{ID: "ses_0UNKNOWN", State: "running", Usage: &sessionview.Usage{Calls: 1, Provenance: "unknown"}},
		{ID: "ses_00NOCALL", State: "running"},
	}
	out := Once(rows, time.Now(), 180, "/state", "", Plain)
	lines := strings.Split(out, "\n")
	if !strings.HasSuffix(lines[0], "· cost $0.50+? estimated+unknown") || !strings.Contains(lines[1], " COST ") {
		t.Fatalf("title and header:\n%s", out)
	}
	at := strings.Index(lines[1], "COST")
	for i, want := range []string{"$0.50", "?", "-"} {
		if got := strings.TrimSpace(lines[2+i][at : at+costWidth]); got != want {
			t.Fatalf("row %d's cost %q, want %q:\n%s", i, got, want, out)
		}
	}
	if strings.Contains(Once(rows[2:], time.Now(), 180, "/state", "", Plain), "COST") {
		t.Fatal("a table without usage shows a cost column")
	}
}

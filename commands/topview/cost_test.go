package topview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
)

func usd(v float64) *float64 { return &v }

// TestCostColumnAndTotal: once a session has usage, top shows a cost
// column ("?" for an unpriced session, never $0.00; "-" without calls)
// and a total line under the rows: the sessions, how many are
// unpriced, their tokens, the total cost under the cost column and its
// provenance.
func TestCostColumnAndTotal(t *testing.T) {
	rows := []Row{
		{ID: "ses_00PRICED", State: "running", Usage: &sessionview.Usage{Calls: 2, Total: 1500, USD: usd(0.5), Provenance: "estimated"}},
		{ID: "ses_0UNKNOWN", State: "running", Usage: &sessionview.Usage{Calls: 1, Total: 700, Provenance: "unknown"}},
		{ID: "ses_00NOCALL", State: "running"},
	}
	for _, width := range []int{80, 160, 180} {
		out := Once(rows, time.Now(), width, "/state", "", Plain)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 6 || strings.Contains(lines[0], "cost") || !strings.Contains(lines[1], " COST ") {
			t.Fatalf("width %d: title, header, three rows and the total line:\n%s", width, out)
		}
		at := strings.Index(lines[1], "COST")
		for i, want := range []string{"$0.50", "?", "-", "$0.50+?"} {
			if got := strings.TrimSpace(lines[2+i][at : at+costWidth]); got != want {
				t.Fatalf("width %d: line %d's cost %q, want %q:\n%s", width, 2+i, got, want, out)
			}
		}
		total := lines[5]
		if !strings.HasPrefix(total, "TOTAL 3 sessions · 1 unpriced · 2.2k tokens ") || !strings.HasSuffix(total, "$0.50+?   estimated+unknown") {
			t.Fatalf("width %d: total line %q", width, total)
		}
	}
	if out := Once(rows[2:], time.Now(), 180, "/state", "", Plain); strings.Contains(out, "COST") || strings.Contains(out, "TOTAL") {
		t.Fatalf("a table without usage shows a cost column or a total:\n%s", out)
	}
}

// TestTotalLineStyledAndExact: the live view draws the total line
// exactly width cells wide, bold where the output takes attributes.
func TestTotalLineStyledAndExact(t *testing.T) {
	rows := []Row{{ID: "ses_00PRICED", State: "running", Usage: &sessionview.Usage{Calls: 1, Total: 10, USD: usd(0.25), Provenance: "native"}}}
	for _, width := range []int{80, 150, 200} {
		line, ok := TotalLine(rows, width, Plain)
		if !ok || Width(line) != width || !strings.HasPrefix(line, "TOTAL 1 session · 10 tokens ") {
			t.Fatalf("width %d: %q (%d cells), ok %v", width, line, Width(line), ok)
		}
	}
	if line, _ := TotalLine(rows, 120, Attributes); !strings.HasPrefix(line, "\x1b[1mTOTAL") {
		t.Fatalf("styled total line %q, want bold", line)
	}
	if _, ok := TotalLine([]Row{{ID: "ses_1", State: "running"}}, 120, Plain); ok {
		t.Fatal("a total line without usage")
	}
}

// TestTotals: the totals of sessions (top --json --totals) add their
// tokens, give the priced part of the cost with the provenances joined,
// and count the sessions whose cost is wholly or partly unknown; with no
// priced call the cost is null, never 0.
func TestTotals(t *testing.T) {
	native := &sessionview.Usage{Calls: 2, Input: 10, CacheRead: 20, CacheWrite: 30, Output: 4, Reasoning: 1, Total: 64, USD: usd(0.25), Provenance: "native"}
	estimated := &sessionview.Usage{Calls: 1, Input: 1, Output: 1, Total: 2, USD: usd(0.5), Provenance: "estimated"}
	partly := &sessionview.Usage{Calls: 3, Input: 5, Total: 5, USD: usd(0.125), Provenance: "estimated+unknown"}
	unknown := &sessionview.Usage{Calls: 1, Input: 7, Total: 7, Provenance: "unknown"}
	for _, tc := range []struct {
		name  string
		us    []*sessionview.Usage
		want  string
		unset bool
	}{
		{"none", []*sessionview.Usage{nil, nil}, `{"sessions":2,"sessions_with_usage":0,"unknown_cost_sessions":0,"calls":0,"input_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"output_tokens":0,"reasoning_tokens":0,"total_tokens":0,"cost_usd":null,"cost_provenance":""}`, true},
		{"native", []*sessionview.Usage{native, nil}, `{"sessions":2,"sessions_with_usage":1,"unknown_cost_sessions":0,"calls":2,"input_tokens":10,"cache_read_tokens":20,"cache_write_tokens":30,"output_tokens":4,"reasoning_tokens":1,"total_tokens":64,"cost_usd":0.25,"cost_provenance":"native"}`, false},
		{"mixed", []*sessionview.Usage{native, estimated, partly, unknown}, `{"sessions":4,"sessions_with_usage":4,"unknown_cost_sessions":2,"calls":7,"input_tokens":23,"cache_read_tokens":20,"cache_write_tokens":30,"output_tokens":5,"reasoning_tokens":1,"total_tokens":78,"cost_usd":0.875,"cost_provenance":"native+estimated+unknown"}`, false},
		{"unknown", []*sessionview.Usage{unknown}, `{"sessions":1,"sessions_with_usage":1,"unknown_cost_sessions":1,"calls":1,"input_tokens":7,"cache_read_tokens":0,"cache_write_tokens":0,"output_tokens":0,"reasoning_tokens":0,"total_tokens":7,"cost_usd":null,"cost_provenance":"unknown"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rows []Row
			for _, u := range tc.us {
				rows = append(rows, Row{ID: "ses_x", State: "running", Usage: u})
			}
			tot := TotalsOf(rows)
			b, err := json.Marshal(tot)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("totals\n%s\nwant\n%s", b, tc.want)
			}
			if (tot.USD == nil) != tc.unset {
				t.Fatalf("cost %v, want unset %v", tot.USD, tc.unset)
			}
			// The rows' own usage is not changed by the sum.
			if native.Calls != 2 || *native.USD != 0.25 {
				t.Fatalf("the sum changed a row's usage: %+v", native)
			}
		})
	}
}

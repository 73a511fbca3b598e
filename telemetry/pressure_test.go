package telemetry

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestLevelsOf(t *testing.T) {
	tests := []struct {
		frac float64
		want Level
	}{
		{0, LevelLow}, {0.4999, LevelLow}, {0.5, LevelModerate}, {0.7499, LevelModerate},
		{0.75, LevelHigh}, {0.8999, LevelHigh}, {0.9, LevelCritical}, {1.3, LevelCritical},
	}
	for _, tc := range tests {
		if got := DefaultLevels.Of(tc.frac); got != tc.want {
			t.Errorf("Of(%v) = %s, want %s", tc.frac, got, tc.want)
		}
	}
}

func TestLevelsValidate(t *testing.T) {
	tests := []struct {
		name string
		l    Levels
		ok   bool
	}{
		{"defaults", DefaultLevels, true},
		{"custom", Levels{0.3, 0.6, 0.95}, true},
		{"zero", Levels{}, false},
		{"unordered", Levels{0.8, 0.6, 0.9}, false},
		{"above one", Levels{0.5, 0.75, 1.2}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.l.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestPressureTracker(t *testing.T) {
	use := func(tokens, window int64) Observation {
		return Observation{Kind: ObsUsage, Tokens: tokens, Window: window}
	}
	tests := []struct {
		name   string
		levels Levels
		in     []Observation
		want   []string
	}{
		{
			name: "only level changes are reported",
			in:   []Observation{use(10, 100), use(20, 100), use(55, 100), use(60, 100), use(80, 100), use(95, 100), use(99, 100)},
			want: []string{
				"pressure tokens=55 window=100 level=low->moderate 55",
				"pressure tokens=80 window=100 level=moderate->high 80",
				"pressure tokens=95 window=100 level=high->critical 95",
			},
		},
		{
			name: "compaction resets, even to the same level",
			in: []Observation{
				use(95, 100),
				{Kind: ObsCompacted, PreTokens: 95, PostTokens: 10},
				use(12, 100),
				{Kind: ObsCompacted, PreTokens: 12},
			},
			want: []string{
				"pressure tokens=95 window=100 level=low->critical 95",
				"pressure tokens=10 window=100 pre=95 post=10 level=critical->low 10",
				"pressure window=100 pre=12 post=0 level=low->low 0",
			},
		},
		{
			name: "usage without a window is ignored; going down is a change",
			in:   []Observation{use(90, 0), use(90, 100), use(10, 100)},
			want: []string{
				"pressure tokens=90 window=100 level=low->critical 90",
				"pressure tokens=10 window=100 level=critical->low 10",
			},
		},
		{
			name:   "custom thresholds",
			levels: Levels{0.1, 0.2, 0.3},
			in:     []Observation{use(15, 100), use(25, 100)},
			want: []string{
				"pressure tokens=15 window=100 level=low->moderate 15",
				"pressure tokens=25 window=100 level=moderate->high 25",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.levels
			if l == (Levels{}) {
				l = DefaultLevels
			}
			tr := NewPressureTracker(l)
			var got []string
			for _, o := range tc.in {
				if p, ok := tr.Observe(o); ok {
					got = append(got, summary(p)+" "+strings.TrimSuffix(strings.TrimRight(fmtPct(p.Percent), "0"), "."))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func fmtPct(p float64) string { return strconv.FormatFloat(p, 'f', 2, 64) }

// summary renders an observation on one line for comparisons.
func summary(o Observation) string {
	s := string(o.Kind)
	if o.FrameID != "" {
		s += " frame=" + o.FrameID
	}
	if o.ParentFrameID != "" {
		s += " parent=" + o.ParentFrameID
	}
	if o.Tokens != 0 || o.Kind == ObsUsage {
		s += fmt.Sprintf(" tokens=%d", o.Tokens)
	}
	if o.Window != 0 {
		s += fmt.Sprintf(" window=%d", o.Window)
	}
	if o.Trigger != "" {
		s += " trigger=" + o.Trigger
	}
	if o.PreTokens != 0 || o.PostTokens != 0 {
		s += fmt.Sprintf(" pre=%d post=%d", o.PreTokens, o.PostTokens)
	}
	if o.Kind == ObsHarnessSession {
		s += " id=" + o.HarnessSessionID
		if o.Cwd != "" {
			s += " cwd=" + o.Cwd
		}
	}
	if o.Level != "" {
		s += fmt.Sprintf(" level=%s->%s", o.Previous, o.Level)
	}
	return s
}

// TestPressureTrackerReportsANewConversationsFirstReading: a tracker
// following a renewal's new conversation reports its first reading even
// when low (and only the first); a plain tracker does not.
func TestPressureTrackerReportsANewConversationsFirstReading(t *testing.T) {
	low := Observation{Kind: ObsUsage, Tokens: 15, Window: 100}
	plain := NewPressureTracker(DefaultLevels)
	if _, ok := plain.Observe(low); ok {
		t.Error("a session's first low reading was reported")
	}
	fresh := NewPressureTracker(DefaultLevels)
	fresh.ReportFirstReading()
	p, ok := fresh.Observe(low)
	if !ok || p.Kind != ObsPressure || p.Level != LevelLow || p.Tokens != 15 || p.Percent != 15 {
		t.Fatalf("first reading of a new conversation: %+v, %v", p, ok)
	}
	if _, ok := fresh.Observe(Observation{Kind: ObsUsage, Tokens: 20, Window: 100}); ok {
		t.Error("a second low reading was reported")
	}
}

package autorenew

import (
	"testing"

	"github.com/lifeloop/lifeloop/telemetry"
)

func TestLevelsFor(t *testing.T) {
	def := telemetry.DefaultLevels
	cases := []struct {
		in   string
		want telemetry.Levels
	}{
		{"70%", telemetry.Levels{Moderate: 0.50, High: 0.70, Critical: 0.90}},
		{"60%", telemetry.Levels{Moderate: 0.50, High: 0.60, Critical: 0.90}},
		{"40%", telemetry.Levels{Moderate: 0.40, High: 0.75, Critical: 0.90}},
		{"80%", telemetry.Levels{Moderate: 0.50, High: 0.75, Critical: 0.80}},
		{"75%", def},
		{"95%", telemetry.Levels{Moderate: 0.50, High: 0.75, Critical: 0.95}},
		{"150000", def},
	}
	for _, c := range cases {
		th, err := ParseThreshold(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got := LevelsFor(th, def)
		if got != c.want {
			t.Errorf("LevelsFor(%s) = %+v, want %+v", c.in, got, c.want)
		}
		if got.Validate() != nil {
			t.Errorf("LevelsFor(%s) = %+v: not valid", c.in, got)
		}
		// A reading at the threshold is a level change from just below it.
		if th.Percent > 0 {
			below, at := got.Of(th.Percent/100-0.001), got.Of(th.Percent/100)
			if below == at {
				t.Errorf("LevelsFor(%s): %v just below and at the threshold are one level (%s): no receipt would say it", c.in, th.Percent, at)
			}
		}
	}
}

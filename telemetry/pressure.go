package telemetry

import "fmt"

// Level is a context pressure level.
type Level string

// Pressure levels, in increasing order.
const (
	LevelLow      Level = "low"
	LevelModerate Level = "moderate"
	LevelHigh     Level = "high"
	LevelCritical Level = "critical"
)

// AllLevels lists every level in increasing order.
var AllLevels = []Level{LevelLow, LevelModerate, LevelHigh, LevelCritical}

// Levels holds the fractions of the window at which each level starts.
type Levels struct {
	Moderate, High, Critical float64
}

// DefaultLevels are 50 %, 75 % and 90 % of the effective window.
var DefaultLevels = Levels{Moderate: 0.50, High: 0.75, Critical: 0.90}

// Validate checks 0 < Moderate < High < Critical <= 1.
func (l Levels) Validate() error {
	if l.Moderate <= 0 || l.Moderate >= l.High || l.High >= l.Critical || l.Critical > 1 {
		return fmt.Errorf("telemetry: pressure thresholds must satisfy 0 < moderate < high < critical <= 1, got %v/%v/%v", l.Moderate, l.High, l.Critical)
	}
	return nil
}

// Of returns the level for a fraction of the window in use.
func (l Levels) Of(fraction float64) Level {
	switch {
	case fraction >= l.Critical:
		return LevelCritical
	case fraction >= l.High:
		return LevelHigh
	case fraction >= l.Moderate:
		return LevelModerate
	}
	return LevelLow
}

// PressureTracker turns [ObsUsage] and [ObsCompacted] observations into
// level changes. The zero value is not usable; use [NewPressureTracker].
type PressureTracker struct {
	levels      Levels
	level       Level
	window      int64
	known       bool
	reportFirst bool
}

// ReportFirstReading makes the first usage reading a change even when it
// is low: the tracker follows a new conversation, whose level replaces
// the one an earlier conversation of the session left.
func (t *PressureTracker) ReportFirstReading() { t.reportFirst = true }

// NewPressureTracker returns a tracker with the given thresholds; invalid
// thresholds fall back to [DefaultLevels] (check with [Levels.Validate]).
func NewPressureTracker(l Levels) *PressureTracker {
	if l.Validate() != nil {
		l = DefaultLevels
	}
	return &PressureTracker{levels: l, level: LevelLow}
}

// Level returns the current level.
func (t *PressureTracker) Level() Level { return t.level }

// Observe feeds one observation. It returns an [ObsPressure] observation
// and true only when the level changes, or on every compaction (which
// resets the level to that of the post-compaction tokens, or low when they
// are unknown). Usage without a window is ignored; other kinds are ignored.
func (t *PressureTracker) Observe(o Observation) (Observation, bool) {
	switch o.Kind {
	case ObsUsage:
		if o.Window <= 0 {
			return Observation{}, false
		}
		t.window = o.Window
		lvl := t.levels.Of(float64(o.Tokens) / float64(o.Window))
		if t.known && lvl == t.level {
			return Observation{}, false
		}
		first := !t.known
		t.known = true
		if first && lvl == LevelLow && !t.reportFirst {
			t.level = lvl
			return Observation{}, false // starting low is not a change
		}
		return t.change(o, o.Tokens, lvl, ""), true
	case ObsCompacted:
		if o.Window > 0 {
			t.window = o.Window
		}
		lvl := LevelLow
		if t.window > 0 && o.PostTokens > 0 {
			lvl = t.levels.Of(float64(o.PostTokens) / float64(t.window))
		}
		t.known = true
		return t.change(o, o.PostTokens, lvl, "compacted"), true
	}
	return Observation{}, false
}

func (t *PressureTracker) change(o Observation, tokens int64, lvl Level, detail string) Observation {
	p := o
	p.Kind = ObsPressure
	p.Previous = t.level
	p.Level = lvl
	p.Tokens = tokens
	p.Window = t.window
	if t.window > 0 {
		p.Percent = 100 * float64(tokens) / float64(t.window)
	}
	p.Detail = detail
	t.level = lvl
	return p
}

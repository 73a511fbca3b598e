package autorenew

import "github.com/lifeloop/lifeloop/telemetry"

// LevelsFor returns the pressure levels a session run with threshold t
// should record, from base (the session's levels, usually
// telemetry.DefaultLevels). The wrapper records context.pressure_observed
// only when the level changes, so a percentage threshold between two
// boundaries is seen only at the next one (70 % at 75 % by default):
// LevelsFor moves the nearest boundary at or above the threshold onto it
// (70 % → moderate 50, high 70, critical 90; 95 % → critical 95). A
// token threshold, whose share of the window is not known before the
// harness says it, and a threshold on a boundary already leave base as
// it is.
func LevelsFor(t Threshold, base telemetry.Levels) telemetry.Levels {
	if t.Tokens > 0 || !t.Valid() || base.Validate() != nil {
		return base
	}
	f := t.Percent / 100
	out := base
	switch {
	case f <= base.Moderate:
		out.Moderate = f
	case f <= base.High:
		out.High = f
	default:
		out.Critical = f
	}
	if out.Validate() != nil {
		return base
	}
	return out
}

package autorenew

import (
	"fmt"
	"time"
)

// Config is the policy's rules; each field has a documented default
// (Defaults) a person can change with a flag of `lifeloop autorenew`.
type Config struct {
	Threshold Threshold
	// Resume renews by resuming the harness conversation instead of
	// starting a fresh one (the default: fresh, with the handoff note).
	Resume bool
	// Settle is how long the session must have been between turns (the
	// last frame ended, none open) before the policy asks.
	Settle time.Duration
	// FutileMargin, in percentage points of the window (or of the token
	// threshold), is the futile guard: when the new conversation's first
	// pressure reading is already within it of the threshold, the
	// policy stops renewing this session and says why.
	FutileMargin float64
	// PerHour bounds this session's policy renewals in any hour (asked
	// renewals that failed count too).
	PerHour int
	// WaitMax bounds how long the policy waits for a safe moment (or a
	// machine lease) after the threshold was crossed; then it gives up
	// on that crossing and says so.
	WaitMax time.Duration
}

// The defaults of Config's rules.
const (
	DefaultSettle       = 2 * time.Second
	DefaultFutileMargin = 10.0
	DefaultPerHour      = 3
	DefaultWaitMax      = 30 * time.Minute
	// BusyRetry is how long the policy waits before asking again when
	// no machine lease was free (Busy).
	BusyRetry = 5 * time.Second
)

// Defaults are the rules' defaults: Settle 2 s, FutileMargin 10 points,
// PerHour 3, WaitMax 30 min; fresh renewals.
func Defaults(t Threshold) Config {
	return Config{Threshold: t, Settle: DefaultSettle, FutileMargin: DefaultFutileMargin, PerHour: DefaultPerHour, WaitMax: DefaultWaitMax}
}

// Validate says what is wrong with c, naming the rule, or nil.
func (c Config) Validate() error {
	switch {
	case !c.Threshold.Valid():
		return fmt.Errorf("threshold %q: give a percentage of the context window (70%%) or a token count (150000, 150k)", c.Threshold.String())
	case c.PerHour < 1:
		return fmt.Errorf("renewals per hour %d: give 1 or more", c.PerHour)
	case c.Settle < 0:
		return fmt.Errorf("settle %s: give 0 or more", c.Settle)
	case c.WaitMax <= 0:
		return fmt.Errorf("wait max %s: give a duration above 0 (30m)", c.WaitMax)
	case c.FutileMargin < 0 || c.FutileMargin >= 100:
		return fmt.Errorf("futile margin %v: give points from 0 to below 100 (10)", c.FutileMargin)
	}
	return nil
}

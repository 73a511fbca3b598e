package launcher

import (
	"time"
)

// Activity values reported in supervisor.tick receipts.
const (
	activityActive = "active"
	activityIdle   = "idle"
	// activityUnmetered: the harness's output does not pass through
	// lifeloop (it writes to a pipe or file lifeloop handed it), so no
	// output is counted and idleness is not judged.
	activityUnmetered = "unmetered"
)

// Tick triggers.
const (
	tickInterval       = "interval"
	tickActivityChange = "activity_change"
	tickStateChange    = "state_change"
	// tickAttentionChanged: the session's attention changed (a dialog
	// opened or was answered, a turn ended, an error stopped it): recorded
	// at once, carrying the attention block (attention_stream.go).
	tickAttentionChanged = "attention_changed"
)

// tickSample is what one supervisor.tick receipt reports.
type tickSample struct {
	Pid       int
	Alive     bool
	Processes int
	// Usage says RSSBytes and CPUSeconds were measured; where the
	// platform cannot measure them (macOS without libproc) the receipt
	// leaves both out rather than report zero.
	Usage       bool
	RSSBytes    uint64
	CPUSeconds  float64
	OutputBytes uint64 // since the previous tick
	IdleSeconds float64
	Activity    string
}

// ticksOff is the interval of a tick clock that only runs the activity
// checks (ticks off, Config.Tick 0): never reached.
const ticksOff = 100 * 365 * 24 * time.Hour

// tickClock schedules interval ticks and activity checks on one timer:
// each firing is one or the other (a tick also settles the activity, so
// a check due at the same moment is folded into it).
type tickClock struct {
	timer           *time.Timer
	every, check    time.Duration
	nextTick, nextC time.Time
}

type due int

const (
	dueNone due = iota
	dueTick
	dueCheck
)

func newTickClock(every, check time.Duration, now time.Time) *tickClock {
	if check <= 0 {
		check = time.Second
	}
	c := &tickClock{every: every, check: check, nextTick: now.Add(every), nextC: now.Add(check)}
	c.timer = time.NewTimer(c.wait(now))
	return c
}

// fired says what is due at now and re-arms the timer. Like a Ticker, a
// schedule that fell behind skips what it missed rather than catching up.
func (c *tickClock) fired(now time.Time) due {
	d := dueNone
	if !now.Before(c.nextTick) {
		d = dueTick
		c.nextTick = after(c.nextTick, c.every, now)
		c.nextC = after(c.nextC, c.check, now)
	} else if !now.Before(c.nextC) {
		d = dueCheck
		c.nextC = after(c.nextC, c.check, now)
	}
	c.timer.Reset(c.wait(now))
	return d
}

func (c *tickClock) wait(now time.Time) time.Duration {
	next := c.nextTick
	if c.nextC.Before(next) {
		next = c.nextC
	}
	return max(next.Sub(now), 0)
}

// after returns the first time past now on the schedule next, next+every, …
func after(next time.Time, every time.Duration, now time.Time) time.Time {
	next = next.Add(every)
	if !next.After(now) {
		next = now.Add(every)
	}
	return next
}

// activityOf says whether output arrived within idleAfter of now.
func activityOf(lastOutput, started, now time.Time, idleAfter time.Duration) (string, float64) {
	ref := lastOutput
	if ref.IsZero() {
		ref = started
	}
	idle := now.Sub(ref)
	if idle < 0 {
		idle = 0
	}
	if idle >= idleAfter {
		return activityIdle, idle.Seconds()
	}
	return activityActive, idle.Seconds()
}

func (s tickSample) summary(trigger, state string) map[string]any {
	m := map[string]any{
		"trigger":      trigger,
		"state":        state,
		"pid":          s.Pid,
		"alive":        s.Alive,
		"processes":    s.Processes,
		"output_bytes": s.OutputBytes,
		"idle_seconds": roundMillis(s.IdleSeconds),
		"activity":     s.Activity,
	}
	if s.Activity == activityUnmetered {
		delete(m, "output_bytes")
		delete(m, "idle_seconds")
	}
	if s.Usage {
		m["rss_bytes"] = s.RSSBytes
		m["cpu_seconds"] = roundMillis(s.CPUSeconds)
	}
	return m
}

func roundMillis(f float64) float64 {
	return float64(int64(f*1000+0.5)) / 1000
}

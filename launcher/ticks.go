package launcher

import (
	"time"

	"github.com/lifeloop/lifeloop/internal/procfs"
)

// Activity values reported in supervisor.tick receipts.
const (
	activityActive = "active"
	activityIdle   = "idle"
)

// Tick triggers.
const (
	tickInterval       = "interval"
	tickActivityChange = "activity_change"
	tickStateChange    = "state_change"
)

// tickSample is what one supervisor.tick receipt reports.
type tickSample struct {
	Pid         int
	Alive       bool
	Processes   int
	RSSBytes    uint64
	CPUSeconds  float64
	OutputBytes uint64 // since the previous tick
	IdleSeconds float64
	Activity    string
}

// sampleGroup reads the process group's size, memory and CPU from /proc.
// Errors leave the numbers at zero: a tick is evidence, never fatal.
func sampleGroup(pid int) (alive bool, procs int, rss uint64, cpu float64) {
	members, err := procfs.GroupStats(pid)
	if err != nil {
		return false, 0, 0, 0
	}
	for _, st := range members {
		if st.PID == pid && st.State != 'Z' {
			alive = true
		}
		procs++
		rss += st.RSSBytes
		cpu += st.CPUSeconds
	}
	return alive, procs, rss, cpu
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
	return map[string]any{
		"trigger":      trigger,
		"state":        state,
		"pid":          s.Pid,
		"alive":        s.Alive,
		"processes":    s.Processes,
		"rss_bytes":    s.RSSBytes,
		"cpu_seconds":  roundMillis(s.CPUSeconds),
		"output_bytes": s.OutputBytes,
		"idle_seconds": roundMillis(s.IdleSeconds),
		"activity":     s.Activity,
	}
}

func roundMillis(f float64) float64 {
	return float64(int64(f*1000+0.5)) / 1000
}

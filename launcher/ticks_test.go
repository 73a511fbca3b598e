package launcher

import (
	"testing"
	"time"
)

// TestTickClock: interval ticks and activity checks come from one timer,
// in order, a check due with a tick folded into it, and a schedule that
// fell behind skips ahead instead of firing the missed ones.
func TestTickClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := newTickClock(3*time.Second, time.Second, t0)
	defer c.timer.Stop()
	at := t0.Add
	steps := []struct {
		now  time.Duration
		want due
	}{
		{time.Second, dueCheck},
		{2 * time.Second, dueCheck},
		{3 * time.Second, dueTick}, // the check due at 3s too is folded in
		{4 * time.Second, dueCheck},
		{4500 * time.Millisecond, dueNone}, // an early wake-up does nothing
		{5 * time.Second, dueCheck},
		{6 * time.Second, dueTick},
		{20 * time.Second, dueTick}, // behind: one tick, not four
		{21 * time.Second, dueCheck},
		{22 * time.Second, dueCheck},
		{23 * time.Second, dueTick},
	}
	for _, st := range steps {
		if got := c.fired(at(st.now)); got != st.want {
			t.Fatalf("at %v: %v, want %v", st.now, got, st.want)
		}
	}
	if w := c.wait(at(23 * time.Second)); w != time.Second {
		t.Fatalf("next wake-up in %v, want 1s", w)
	}
	if d := newTickClock(time.Second, 0, t0); d.check != time.Second {
		t.Fatalf("a zero check interval must default to 1s, got %v", d.check)
	} else {
		d.timer.Stop()
	}
}

// TestTickSummaryUsage: a tick reports memory and CPU only when they were
// measured; where the platform gives none the fields are absent, not 0.
func TestTickSummaryUsage(t *testing.T) {
	s := tickSample{Pid: 7, Alive: true, Processes: 2, Usage: true, RSSBytes: 4096, CPUSeconds: 1.23456}
	m := s.summary("interval", "running")
	if m["rss_bytes"] != uint64(4096) || m["cpu_seconds"] != 1.235 {
		t.Fatalf("measured tick summary %v", m)
	}
	s.Usage = false
	m = s.summary("interval", "running")
	for _, k := range []string{"rss_bytes", "cpu_seconds"} {
		if _, ok := m[k]; ok {
			t.Fatalf("unmeasured tick reports %s: %v", k, m)
		}
	}
	if m["processes"] != 2 || m["alive"] != true {
		t.Fatalf("unmeasured tick lost the process count: %v", m)
	}
}

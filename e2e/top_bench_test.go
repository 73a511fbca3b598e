package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
)

// cpuTicks is the user+system CPU time of process pid so far, in clock
// ticks (/proc/PID/stat fields 14 and 15).
func cpuTicks(tb testing.TB, pid int) int64 {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}

// BenchmarkTopIdle measures what an idle `lifeloop top` costs with 20
// live sessions: 20 `lifeloop run -- sleep` wrappers with the default
// supervisor tick (each appends a receipt every 10 s, which top reads and
// redraws for), top on a 160×48 terminal, and top's own CPU time over a
// window (LIFELOOP_BENCH_TOP_IDLE, default 30s) as a percentage of one
// core (metric cpu-%). The target is under 0.5 %.
func BenchmarkTopIdle(b *testing.B) {
	ll := lifeloopBin(b)
	window := 30 * time.Second
	if v := os.Getenv("LIFELOOP_BENCH_TOP_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("LIFELOOP_BENCH_TOP_IDLE: %v", err)
		}
		window = d
	}
	state := benchState(b)
	const sessions = 20
	var wrappers []*exec.Cmd
	for range sessions {
		cmd := exec.CommandContext(b.Context(), ll, "run", "--state-dir", state, "--", "sleep", "3600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		wrappers = append(wrappers, cmd)
	}
	b.Cleanup(func() {
		for _, c := range wrappers {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		}
		for _, c := range wrappers {
			_ = c.Wait()
			if left := testharness.WaitProcessGroupGone(c.Process.Pid, 15*time.Second); len(left) > 0 {
				b.Errorf("left behind: %v", left)
			}
		}
	})
	// All 20 running before top starts, so its first screen shows them.
	liveSessions(b, state, sessions)
	cmd := exec.CommandContext(b.Context(), ll, "top", "--state-dir", state)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	top := testharness.StartTerminal(b, cmd, 160, 48)
	if err := top.WaitFor(fmt.Sprintf("%d live", sessions), screenTimeout); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second) // start-up done
	hz := int64(100)            // USER_HZ on Linux
	var pct float64
	for b.Loop() {
		c0, t0 := cpuTicks(b, top.Pid()), time.Now()
		time.Sleep(window)
		c1, wall := cpuTicks(b, top.Pid()), time.Since(t0)
		pct = 100 * float64(c1-c0) / float64(hz) / wall.Seconds()
	}
	b.ReportMetric(pct, "cpu-%")
	b.Logf("idle lifeloop top with %d live sessions: %.3f %% of a core over %v (target < 0.5 %%)", sessions, pct, window)
	top.Type("q")
	if _, _, err := top.WaitTimeout(screenTimeout); err != nil {
		b.Error(err)
	}
}

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The benchmarks below compare `lifeloop run` with running the command
// directly and with script(1) in the same run, so ratios are meaningful on
// a shared machine. `make bench` runs them.

func benchState(b *testing.B) string {
	b.Helper()
	return filepath.Join(b.TempDir(), "state")
}

// BenchmarkStartExit measures start-to-exit latency of `true`: directly,
// under script(1), and under `lifeloop run --tick 0`.
func BenchmarkStartExit(b *testing.B) {
	ll := lifeloopBin(b)
	state := benchState(b)
	cases := []struct {
		name string
		argv []string
	}{
		{"direct", []string{"true"}},
		{"script", []string{"script", "-qec", "true", "/dev/null"}},
		{"lifeloop", []string{ll, "run", "--state-dir", state, "--tick", "0", "--", "true"}},
	}
	for _, c := range cases {
		if _, err := exec.LookPath(c.argv[0]); err != nil {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.CommandContext(b.Context(), c.argv[0], c.argv[1:]...)
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRelay measures relaying 256 MiB of harness output to /dev/null
// under script(1) and under lifeloop run; it also reports lifeloop's peak
// RSS.
func BenchmarkRelay(b *testing.B) {
	ll := lifeloopBin(b)
	state := benchState(b)
	const size = 256 << 20
	gen := "head -c " + strconv.Itoa(size) + " /dev/zero"
	cases := []struct {
		name string
		argv []string
	}{
		{"script", []string{"script", "-qec", gen, "/dev/null"}},
		{"lifeloop", []string{ll, "run", "--state-dir", state, "--tick", "0", "--", "sh", "-c", gen}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			var maxRSS int64
			for b.Loop() {
				cmd := exec.CommandContext(b.Context(), c.argv[0], c.argv[1:]...)
				devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				cmd.Stdout = devnull
				usage := measure(b, cmd)
				err := cmd.Run()
				devnull.Close()
				if err != nil {
					b.Fatal(err)
				}
				_, rss := usage()
				maxRSS = max(maxRSS, rss)
			}
			b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
		})
	}
}

// BenchmarkIdleCost runs an idle harness (sleep) under lifeloop with
// --tick 1s and reports lifeloop's own CPU time as a percentage of one
// core. LIFELOOP_BENCH_IDLE sets the duration (default 20s; the target is
// stated for 60s).
func BenchmarkIdleCost(b *testing.B) {
	ll := lifeloopBin(b)
	d := 20 * time.Second
	if v := os.Getenv("LIFELOOP_BENCH_IDLE"); v != "" {
		if p, err := time.ParseDuration(v); err == nil {
			d = p
		}
	}
	for b.Loop() {
		state := benchState(b)
		cmd := exec.CommandContext(b.Context(), ll, "run", "--state-dir", state, "--tick", "1s", "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 0, 64))
		cmd.Env = append(os.Environ(), "LIFELOOP_STATE_DIR="+filepath.Join(b.TempDir(), "state"))
		usage := measure(b, cmd)
		if err := cmd.Run(); err != nil {
			b.Fatalf("lifeloop run: %v", err)
		}
		// lifeloop's rusage with its waited-for children (sleep, whose
		// CPU and peak are below lifeloop's).
		cpu, rss := usage()
		b.ReportMetric(100*cpu.Seconds()/d.Seconds(), "cpu-%-of-core")
		b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
	}
}

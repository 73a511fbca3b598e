package ptyio

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Baselines: running the command directly (no PTY) and script(1), which
// relays a PTY in C. Sub-benchmarks share one run so their ratios compare.

func benchEnv() []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}
}

func needScript(b *testing.B) string {
	b.Helper()
	p, err := exec.LookPath("script")
	if err != nil {
		b.Skip("script(1) not installed")
	}
	return p
}

func benchTerminal(b *testing.B) *Terminal {
	b.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	t, err := OpenTerminal(TerminalConfig{In: r, Out: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = t.Close()
		_ = w.Close()
		_ = r.Close()
	})
	return t
}

func BenchmarkStartExitTrue(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.CommandContext(b.Context(), "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ptyio", func(b *testing.B) {
		t := benchTerminal(b)
		spec := ChildSpec{Path: "true", Env: benchEnv()}
		for b.Loop() {
			c, err := t.Start(spec)
			if err != nil {
				b.Fatal(err)
			}
			if st := c.Wait(); st.ExitCode() != 0 {
				b.Fatalf("true: %v", st)
			}
		}
	})
	b.Run("script", func(b *testing.B) {
		s := needScript(b)
		for b.Loop() {
			runScript(b, s, "true")
		}
	})
}

const relayBytes = 64 << 20

func BenchmarkRelayThroughput(b *testing.B) {
	cmd := "head -c " + strconv.Itoa(relayBytes) + " /dev/zero"
	b.Run("ptyio", func(b *testing.B) {
		t := benchTerminal(b)
		spec := ChildSpec{Path: "sh", Args: []string{"-c", cmd}, Env: benchEnv()}
		b.SetBytes(relayBytes)
		cpu0 := selfCPU(b)
		for b.Loop() {
			c, err := t.Start(spec)
			if err != nil {
				b.Fatal(err)
			}
			if st := c.Wait(); st.ExitCode() != 0 {
				b.Fatalf("%s: %v", cmd, st)
			}
			if n := c.Activity().BytesOut; n != relayBytes {
				b.Fatalf("relayed %d bytes, want %d", n, relayBytes)
			}
		}
		// CPU spent by the relay itself, independent of machine load:
		// wall-clock MB/s is bound by the kernel's PTY line discipline.
		b.ReportMetric(float64(selfCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "relay-cpu-ms/op")
	})
	b.Run("script", func(b *testing.B) {
		s := needScript(b)
		b.SetBytes(relayBytes)
		var cpu time.Duration
		for b.Loop() {
			cpu += runScript(b, s, cmd)
		}
		b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "relay-cpu-ms/op")
	})
}

// selfCPU returns the user+system CPU time of this process.
func selfCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

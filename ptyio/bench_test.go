package ptyio

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
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

// runScript runs `script -qec cmd /dev/null` with output to /dev/null.
func runScript(b *testing.B, script, cmd string) {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	c := exec.Command(script, "-qec", cmd, "/dev/null")
	c.Env = benchEnv()
	c.Stdin, c.Stdout, c.Stderr = null, null, null
	if err := c.Run(); err != nil {
		b.Fatalf("script: %v", err)
	}
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
			if err := exec.Command("true").Run(); err != nil {
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
	})
	b.Run("script", func(b *testing.B) {
		s := needScript(b)
		b.SetBytes(relayBytes)
		for b.Loop() {
			runScript(b, s, cmd)
		}
	})
}

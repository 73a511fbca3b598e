package ptyio

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/internal/procfs"
)

// runScript runs `script -qec cmd /dev/null` with output to /dev/null and
// returns the CPU time script itself used (its children excluded), read
// from /proc while it is a zombie.
func runScript(b *testing.B, script, cmd string) time.Duration {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	c := exec.CommandContext(b.Context(), script, "-qec", cmd, "/dev/null")
	c.Env = benchEnv()
	c.Stdin, c.Stdout, c.Stderr = null, null, null
	if err := c.Start(); err != nil {
		b.Fatalf("script: %v", err)
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, c.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		b.Fatalf("waitid script: %v", err)
	}
	st, err := procfs.Stat(c.Process.Pid)
	if err != nil {
		b.Fatalf("script stat: %v", err)
	}
	if err := c.Wait(); err != nil {
		b.Fatalf("script: %v", err)
	}
	return time.Duration(st.CPUSeconds * float64(time.Second))
}

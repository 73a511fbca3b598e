//go:build linux || darwin

package procfs

import (
	"os/exec"
	"testing"
	"time"
)

// TestWatchExits: the channel stays open while a watched process runs
// and is closed once it and every other watched process have exited (a
// pid already gone is not waited for); closing stop ends a watch early.
func TestWatchExits(t *testing.T) {
	start := func() *exec.Cmd {
		cmd := exec.CommandContext(t.Context(), "sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	gone := exec.CommandContext(t.Context(), "true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	a, b := start(), start()
	stop := make(chan struct{})
	defer close(stop)
	exits := WatchExits([]int{a.Process.Pid, gone.Process.Pid, b.Process.Pid}, stop)
	if exits == nil {
		t.Skip("processes cannot be watched for their exit here (a Linux kernel before 5.3)")
	}
	open := func() bool {
		select {
		case <-exits:
			return false
		case <-time.After(100 * time.Millisecond):
			return true
		}
	}
	if !open() {
		t.Fatal("closed while both processes run")
	}
	_ = a.Process.Kill()
	_ = a.Wait()
	if !open() {
		t.Fatal("closed while one watched process still runs")
	}
	_ = b.Process.Kill()
	_ = b.Wait()
	select {
	case <-exits:
	case <-time.After(30 * time.Second):
		t.Fatal("not closed after every watched process exited")
	}

	c := start()
	stop2 := make(chan struct{})
	exits = WatchExits([]int{c.Process.Pid}, stop2)
	close(stop2)
	select {
	case <-exits:
	case <-time.After(30 * time.Second):
		t.Fatal("not closed after stop")
	}
}

package ptyio

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/procfs"
)

// running reports whether pid is a live process (not a zombie waiting
// for its new parent to reap it).
func running(pid int) bool {
	st, err := procfs.Stat(pid)
	return err == nil && st.State != 'Z'
}

// TestPassThroughHangsUpTheGroup: a child without a PTY that exits
// leaving processes in its group gets them hung up, as the kernel does
// when a session leader with a terminal exits; one that ignores the
// hangup stays.
func TestPassThroughHangsUpTheGroup(t *testing.T) {
	out := tempFile(t, "out")
	tm := openTerm(t, TerminalConfig{In: out, Out: out, Err: out, PassThrough: true})
	dir := t.TempDir()
	pids, ready := filepath.Join(dir, "pids"), filepath.Join(dir, "ready")
	c := start(t, tm, sh(t, `sleep 300 & echo $! > `+pids+`
(trap '' HUP; echo > `+ready+`; exec sleep 300) & echo $! >> `+pids+`
while [ ! -s `+ready+` ]; do sleep 0.01; done`))
	wait(t, c)
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	var hung, kept int
	if _, err := fmt.Sscan(string(b), &hung, &kept); err != nil {
		t.Fatalf("pids %q: %v", b, err)
	}
	defer func() { _ = syscall.Kill(kept, syscall.SIGKILL) }()
	for deadline := time.Now().Add(safety); running(hung); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d left in the group was not hung up", hung)
		}
	}
	if !running(kept) {
		t.Errorf("process %d, which ignores SIGHUP, is gone", kept)
	}
}

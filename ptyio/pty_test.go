package ptyio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOpenPTYMasterPollable: the master from creack/pty, duplicated, is
// served by the poller, so a read deadline ends a Read with no output.
func TestOpenPTYMasterPollable(t *testing.T) {
	pm, ps, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	defer pm.Close()
	if !pollable(pm) {
		t.Fatal("the master is not served by the runtime poller")
	}
	if err := pm.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Read(make([]byte, 16)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read with nothing to read: %v, want a deadline error", err)
	}
	if c := eofChar(pm); c != 4 {
		t.Fatalf("VEOF %d, want ^D", c)
	}
	// A regular file is never pollable: pollable tells the two apart.
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if pollable(f) {
		t.Fatal("a regular file reported pollable")
	}
}

package telemetry

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestFileClaims(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claims")
	a := &FileClaims{Dir: dir, Owner: "ses_A"}
	b := &FileClaims{Dir: dir, Owner: "ses_B"}
	const p = "/x/t.jsonl"
	if !a.Claim(p) {
		t.Fatal("A cannot claim a free path")
	}
	if !a.Claim(p) {
		t.Fatal("A cannot claim a path it already holds")
	}
	if b.Claim(p) {
		t.Fatal("B claimed a path A holds")
	}
	b.Release(p) // not B's: must not remove A's claim
	if b.Claim(p) {
		t.Fatal("B's Release removed A's claim")
	}
	a.Release(p)
	if !b.Claim(p) {
		t.Fatal("B cannot claim a released path")
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("claims folder mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}

	// A claim held by a process that has exited is stale.
	cmd := exec.CommandContext(t.Context(), "true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	dead := &FileClaims{Dir: dir, Owner: "ses_D", PID: cmd.Process.Pid}
	const q = "/x/u.jsonl"
	if !dead.Claim(q) {
		t.Fatal("cannot claim")
	}
	if !a.Claim(q) {
		t.Error("A could not take over a claim whose process is gone")
	}
}

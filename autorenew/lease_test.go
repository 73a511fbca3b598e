package autorenew

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLeaseBoundsSlotsAndFreesOnRelease(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", LeaseDir)
	l := Lease{Dir: dir, Max: 2}
	a, ok, err := l.TryAcquire()
	if err != nil || !ok {
		t.Fatalf("first TryAcquire = %v, %v", ok, err)
	}
	b, ok, err := l.TryAcquire()
	if err != nil || !ok {
		t.Fatalf("second TryAcquire = %v, %v", ok, err)
	}
	// Both slots held (two opens of one process conflict: flock is per
	// open file description).
	if s, ok, err := l.TryAcquire(); err != nil || ok {
		t.Fatalf("third TryAcquire = %v, %v; want no slot", ok, err)
	} else if s != nil {
		t.Fatal("no slot, but a Slot returned")
	}
	a.Release()
	a.Release() // idempotent
	c, ok, err := l.TryAcquire()
	if err != nil || !ok {
		t.Fatalf("TryAcquire after a Release = %v, %v", ok, err)
	}
	if _, ok, _ := l.TryAcquire(); ok {
		t.Fatal("a third slot after the freed one was taken again")
	}
	b.Release()
	c.Release()

	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Fatalf("lease folder mode %v, want 0700", info.Mode().Perm())
	}
	for _, name := range []string{"slot-0.lock", "slot-1.lock"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v, want 0600", name, info.Mode().Perm())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "slot-2.lock")); !os.IsNotExist(err) {
		t.Fatalf("slot-2.lock with Max 2: %v", err)
	}
}

func TestLeaseOfOne(t *testing.T) {
	l := Lease{Dir: t.TempDir(), Max: 1}
	a, ok, err := l.TryAcquire()
	if err != nil || !ok {
		t.Fatalf("TryAcquire = %v, %v", ok, err)
	}
	if _, ok, _ := l.TryAcquire(); ok {
		t.Fatal("two slots of a lease of one")
	}
	a.Release()
	if _, ok, _ := l.TryAcquire(); !ok {
		t.Fatal("the released slot was not free")
	}
}

func TestLeaseMaxBelowOne(t *testing.T) {
	for _, max := range []int{0, -1} {
		_, ok, err := Lease{Dir: t.TempDir(), Max: max}.TryAcquire()
		if err == nil || ok || !strings.Contains(err.Error(), "give 1 or more") {
			t.Fatalf("Max %d: ok %v, err %v", max, ok, err)
		}
	}
}

func TestNilSlotReleaseIsSafe(t *testing.T) {
	var s *Slot
	s.Release()
}

// TestLeaseHeldByAnotherProcessIsFreedWhenItDies: a slot held by another
// process is busy here; when that process is killed (no Release), its
// descriptors go with it and the slot is free.
func TestLeaseHeldByAnotherProcessIsFreedWhenItDies(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseHelperProcess$")
	cmd.Env = append(os.Environ(), "LIFELOOP_LEASE_HELPER_DIR="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	l := Lease{Dir: dir, Max: 1}
	if _, ok, err := l.TryAcquire(); ok || err != nil {
		t.Fatalf("TryAcquire while another process holds the only slot: %v, %v", ok, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s, ok, err := l.TryAcquire()
	if !ok || err != nil {
		t.Fatalf("TryAcquire after the holder died: %v, %v", ok, err)
	}
	s.Release()
}

// TestLeaseHelperProcess holds a slot of the lease in
// $LIFELOOP_LEASE_HELPER_DIR until its stdin closes (run by the test
// above; skipped otherwise).
func TestLeaseHelperProcess(t *testing.T) {
	dir := os.Getenv("LIFELOOP_LEASE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	s, ok, err := Lease{Dir: dir, Max: 1}.TryAcquire()
	if !ok || err != nil {
		fmt.Printf("no slot: %v %v\n", ok, err)
		os.Exit(1)
	}
	defer s.Release()
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

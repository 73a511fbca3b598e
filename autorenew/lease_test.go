package autorenew

import (
	"os"
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

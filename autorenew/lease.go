package autorenew

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/atomicfile"
)

// LeaseDir is the folder of the machine's renewal slots in a state
// folder.
const LeaseDir = "autorenew"

// DefaultMachineMax is the default bound of renewals at once on the
// machine.
const DefaultMachineMax = 2

// Lease bounds the renewals policy clients run at once on the machine
// (all sessions of one state folder): Max slots, each a lock file in
// Dir (the state folder's autorenew/ folder, 0700; files 0600) held
// with an exclusive advisory lock for the length of one renewal. A
// client that dies releases its slot with its descriptors.
type Lease struct {
	Dir string
	Max int
}

// Slot is one held slot; Release frees it.
type Slot struct{ release func() }

// Release frees the slot; it is idempotent.
func (s *Slot) Release() {
	if s != nil && s.release != nil {
		s.release()
		s.release = nil
	}
}

// TryAcquire takes a free slot without waiting; ok is false when all Max
// are held. Slot i is the file slot-<i>.lock in Dir, locked with
// flock(LOCK_EX|LOCK_NB) on its own open file description: two
// TryAcquire of one process conflict as two processes do.
func (l Lease) TryAcquire() (s *Slot, ok bool, err error) {
	if l.Max < 1 {
		return nil, false, fmt.Errorf("renewals at once on the machine %d: give 1 or more", l.Max)
	}
	if l.Dir == "" {
		return nil, false, errors.New("renewal lease: no folder given for its slots")
	}
	if err := os.MkdirAll(l.Dir, atomicfile.DirPerm); err != nil {
		return nil, false, fmt.Errorf("renewal lease: %w", err)
	}
	for i := range l.Max {
		path := filepath.Join(l.Dir, fmt.Sprintf("slot-%d.lock", i))
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, atomicfile.FilePerm)
		if err != nil {
			return nil, false, fmt.Errorf("renewal lease: %w", err)
		}
		err = flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &Slot{release: func() {
				_ = flock(f, unix.LOCK_UN)
				_ = f.Close()
			}}, true, nil
		}
		_ = f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, fmt.Errorf("renewal lease: lock %s: %w", path, err)
		}
	}
	return nil, false, nil
}

// flock locks f, retrying when a signal interrupts the call.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

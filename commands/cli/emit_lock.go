package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// lockEmit takes session id's emit lock: an exclusive flock(2) on its
// folder (made when missing), held by an `emit` that records without a
// wrapper from the check of its idempotency key to its append, so two
// emits racing under one new key settle before anything is recorded —
// the second sees the first's receipt and is refused, or replays it. The
// returned unlock removes the folder again when this emit made it and
// recorded nothing (a refused emit leaves no session behind).
func lockEmit(root, id string) (unlock func(), err error) {
	for {
		made := false
		dir := statedir.SessionDir(root, id)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			made = true
		}
		if _, err := statedir.CreateSessionDir(root, id); err != nil {
			return nil, err
		}
		f, err := os.Open(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed by an emit that made it and was refused
			}
			return nil, err
		}
		if err := flockWait(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking session %s: %w", id, err)
		}
		if !sameFile(f, dir) {
			// The folder locked was removed meanwhile (an emit that made
			// it was refused): lock the one that stands there now.
			f.Close()
			continue
		}
		return func() {
			if made {
				removeEmptySession(root, id)
			}
			_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
			f.Close()
		}, nil
	}
}

func flockWait(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// sameFile reports whether the open f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// WrapperLockFile is the file a session's wrapper (run, watch) holds an
// exclusive flock(2) on for its whole life. The kernel drops the lock when
// the wrapper dies however it dies, so whoever can take it knows the
// wrapper is gone — no pid is trusted for that.
const WrapperLockFile = "wrapper.lock"

// ErrWrapperLive is returned by HoldWrapper when another process holds
// the session's wrapper lock.
var ErrWrapperLive = errors.New("the session has a live wrapper")

// WrapperLockPath returns the wrapper.lock path of session id.
func WrapperLockPath(root, id string) string {
	return filepath.Join(SessionDir(root, id), WrapperLockFile)
}

// HoldWrapper takes session id's wrapper lock for the calling process;
// closing the returned file releases it. The descriptor is close-on-exec,
// so a harness never inherits (and never keeps alive) the lock.
func HoldWrapper(root, id string) (*os.File, error) {
	f, err := os.OpenFile(WrapperLockPath(root, id), os.O_RDWR|os.O_CREATE, FilePerm)
	if err != nil {
		return nil, fmt.Errorf("wrapper lock of session %s: %w", id, err)
	}
	if err := flockNB(f, unix.LOCK_EX); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("session %s: %w", id, ErrWrapperLive)
		}
		return nil, fmt.Errorf("wrapper lock of session %s: %w", id, err)
	}
	return f, nil
}

// WrapperGone reports whether session id had a wrapper that is gone: its
// wrapper.lock exists and nobody holds it. A session no wrapper ever held
// (recorded by `emit` alone, or by an older lifeloop) is not gone.
func WrapperGone(root, id string) bool {
	f, err := os.Open(WrapperLockPath(root, id))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := flockNB(f, unix.LOCK_SH); err != nil {
		return false // held: the wrapper lives
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return true
}

func flockNB(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// WrapperGoneWithin reports whether session id's wrapper is gone or goes
// within d. A caller that just lost its connection to the wrapper asks
// this: a wrapper killed mid-call closes its sockets and its lock in one
// sweep of its exit, and the call can see the first before the second.
func WrapperGoneWithin(root, id string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if WrapperGone(root, id) {
			return true
		}
		if _, err := os.Stat(WrapperLockPath(root, id)); err != nil || !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package procfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exitPoll bounds each wait for an exit, so that stop is seen.
const exitPoll = 50 // ms

// WatchExits returns a channel closed once every process in pids has
// exited, or once stop is closed. Each process is watched through a
// kqueue (EVFILT_PROC, NOTE_EXIT), which reports its end whoever its
// parent is, so a caller waiting for processes it did not start learns
// of their end at once instead of looking again after a pause. It returns
// nil when a process cannot be watched that way: the caller then looks
// again after a pause as before. A process already gone is not waited
// for. (Compiled and vetted on Linux, not run there: TestWatchExits runs
// on a Mac.)
func WatchExits(pids []int, stop <-chan struct{}) <-chan struct{} {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil
	}
	left := 0
	for _, pid := range pids {
		var ev unix.Kevent_t
		unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
		ev.Fflags = unix.NOTE_EXIT
		if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue
			}
			_ = unix.Close(kq)
			return nil
		}
		left++
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = unix.Close(kq) }()
		events := make([]unix.Kevent_t, max(left, 1))
		timeout := unix.NsecToTimespec(exitPoll * 1e6)
		for left > 0 {
			select {
			case <-stop:
				return
			default:
			}
			n, err := unix.Kevent(kq, nil, events, &timeout)
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			for _, ev := range events[:max(n, 0)] {
				if ev.Filter == unix.EVFILT_PROC && ev.Fflags&unix.NOTE_EXIT != 0 {
					left--
				}
			}
		}
	}()
	return done
}

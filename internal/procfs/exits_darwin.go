package procfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

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
	watched := 0
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
		watched++
	}
	events := make([]unix.Kevent_t, max(watched, 1))
	timeout := unix.NsecToTimespec(exitPoll.Nanoseconds())
	wait := func() (int, error) {
		n, err := unix.Kevent(kq, nil, events, &timeout)
		ended := 0
		for _, ev := range events[:max(n, 0)] {
			if ev.Filter == unix.EVFILT_PROC && ev.Fflags&unix.NOTE_EXIT != 0 {
				ended++
			}
		}
		return ended, err
	}
	return watchExits(watched, stop, wait, func() { _ = unix.Close(kq) })
}

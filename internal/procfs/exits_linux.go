package procfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exitPoll bounds each wait for an exit, so that stop is seen.
const exitPoll = 50 // ms

// WatchExits returns a channel closed once every process in pids has
// exited, or once stop is closed. Each process is watched through a
// pidfd, which becomes readable when its process ends, whoever its
// parent is, so a caller waiting for processes it did not start learns
// of their end at once instead of looking again after a pause. It returns
// nil when a process cannot be watched that way (a kernel before 5.3):
// the caller then looks again after a pause as before. A process already
// gone is not waited for.
func WatchExits(pids []int, stop <-chan struct{}) <-chan struct{} {
	fds := make([]unix.PollFd, 0, len(pids))
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			closePollFds(fds)
			return nil
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { closePollFds(fds) }()
		for len(fds) > 0 {
			select {
			case <-stop:
				return
			default:
			}
			n, err := unix.Poll(fds, exitPoll)
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if n <= 0 {
				continue
			}
			left := fds[:0]
			for _, f := range fds {
				if f.Revents != 0 {
					_ = unix.Close(int(f.Fd))
					continue
				}
				left = append(left, f)
			}
			fds = left
		}
	}()
	return done
}

func closePollFds(fds []unix.PollFd) {
	for _, f := range fds {
		_ = unix.Close(int(f.Fd))
	}
}

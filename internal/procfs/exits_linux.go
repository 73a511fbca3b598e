package procfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

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
	wait := func() (int, error) {
		n, err := unix.Poll(fds, int(exitPoll.Milliseconds()))
		if n <= 0 {
			return 0, err
		}
		left, ended := fds[:0], 0
		for _, f := range fds {
			if f.Revents != 0 {
				_ = unix.Close(int(f.Fd))
				ended++
				continue
			}
			left = append(left, f)
		}
		fds = left
		return ended, nil
	}
	return watchExits(len(fds), stop, wait, func() { closePollFds(fds) })
}

func closePollFds(fds []unix.PollFd) {
	for _, f := range fds {
		_ = unix.Close(int(f.Fd))
	}
}

package main

import "syscall"

// sysProcAttr kills the command when this program dies (a benchmark
// that is cancelled kills only its own child).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// maxrssKiB is ru_maxrss, in KiB on Linux.
func maxrssKiB(ru *syscall.Rusage) int64 { return ru.Maxrss }

package main

import (
	"syscall"
	"unsafe"
)

// sigaction is the kernel's struct sigaction on linux/amd64 and arm64.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// dieBySignal restores the kernel default action for sig, bypassing the Go
// runtime's handler (which ignores signals such as SIGUSR1 when nothing is
// notified), and sends sig to this process.
func dieBySignal(sig syscall.Signal) error {
	act := sigaction{} // SIG_DFL
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0); errno != 0 {
		return errno
	}
	return syscall.Kill(syscall.Getpid(), sig)
}

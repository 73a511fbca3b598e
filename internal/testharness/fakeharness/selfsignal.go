package main

import (
	"syscall"
	"unsafe"
)

// dieBySignal restores the kernel default action for sig, bypassing the Go
// runtime's handler (which ignores signals such as SIGUSR1 when nothing is
// notified), and sends sig to this process.
func dieBySignal(sig syscall.Signal) error {
	var act sigaction // SIG_DFL
	if _, _, errno := syscall.RawSyscall6(sysSigaction, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, sigsetSize, 0, 0); errno != 0 {
		return errno
	}
	return syscall.Kill(syscall.Getpid(), sig)
}

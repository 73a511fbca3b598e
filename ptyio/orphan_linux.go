package ptyio

import "syscall"

// hangUpWithParent makes the kernel send the child SIGHUP when this
// process dies: what the hangup of its PTY does for a child that has one,
// for a child that has none (TerminalConfig.PassThrough without any
// terminal). The signal is tied to the thread that starts the child; Go
// keeps that thread for the process's life unless a goroutine locked to
// it exits, which ptyio never does.
func hangUpWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGHUP }

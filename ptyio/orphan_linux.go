package ptyio

import "syscall"

// hangUpWithParent makes the kernel send the child SIGHUP when this
// process dies: what the hangup of its PTY does for a child that has one,
// for a child that has none (TerminalConfig.PassThrough without any
// terminal). The signal is tied to the thread that starts the child,
// which forkAndReap keeps until the child is reaped.
func hangUpWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGHUP }

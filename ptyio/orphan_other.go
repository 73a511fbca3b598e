//go:build !linux

package ptyio

import "syscall"

// hangUpWithParent does nothing where the kernel has no parent-death
// signal (macOS): a child without a PTY outlives a killed lifeloop until
// `lifeloop abort` stops its group (the next command seals the session).
func hangUpWithParent(*syscall.SysProcAttr) {}

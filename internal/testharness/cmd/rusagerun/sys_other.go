//go:build !linux

package main

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }

// maxrssKiB is ru_maxrss, in bytes on the BSDs and macOS.
func maxrssKiB(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) / 1024 }

// Command rusagerun runs a command and writes the command's own resource
// use to a file: CPU time (user and system, nanoseconds) and peak
// resident set in KiB, the children it waited for included.
//
//	rusagerun REPORT-FILE FDS PATH ARGV0 [ARG...]
//
// It starts PATH with argv ARGV0 ARG..., the environment and working
// folder it was given and its descriptors 0 to FDS-1, and exits with the
// command's exit code (128+N when signal N ended it).
//
// Why: on Linux wait4's peak (ru_maxrss) of a child that execs includes
// the resident high-water mark of the memory it had before exec, which
// for a child of a Go process is the parent's (Go starts commands with
// vfork), so a /bin/true started by a benchmark of 100 MiB reports 100
// MiB. Started from this program, whose own resident set is a few MiB,
// the command's peak is its own unless it stays below that.
package main

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) < 5 {
		_, _ = os.Stderr.WriteString("usage: rusagerun REPORT-FILE FDS PATH ARGV0 [ARG...]\n")
		os.Exit(2)
	}
	nfds, err := strconv.Atoi(os.Args[2])
	if err != nil || nfds < 3 {
		fail("FDS must be a count of descriptors, at least 3")
	}
	files := make([]uintptr, nfds)
	for i := range files {
		files[i] = uintptr(i)
	}
	// The command's parent-death signal (Linux) is tied to this thread.
	runtime.LockOSThread()
	pid, err := syscall.ForkExec(os.Args[3], os.Args[4:], &syscall.ProcAttr{
		Env: os.Environ(), Files: files, Sys: sysProcAttr(),
	})
	if err != nil {
		fail(err.Error())
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		_, err = syscall.Wait4(pid, &ws, 0, &ru)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		fail("wait: " + err.Error())
	}
	cpu := ru.Utime.Nano() + ru.Stime.Nano()
	report := strconv.FormatInt(cpu, 10) + " " + strconv.FormatInt(maxrssKiB(&ru), 10) + "\n"
	if err := os.WriteFile(os.Args[1], []byte(report), 0o600); err != nil {
		fail(err.Error())
	}
	switch {
	case ws.Exited():
		os.Exit(ws.ExitStatus())
	case ws.Signaled():
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(1)
}

func fail(msg string) {
	_, _ = os.Stderr.WriteString("rusagerun: " + msg + "\n")
	os.Exit(125)
}

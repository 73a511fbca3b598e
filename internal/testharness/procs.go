package testharness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is a live process found in /proc.
type Proc struct {
	PID     int
	PGID    int
	Cmdline string
}

// KillStrays SIGKILLs every process StrayProcesses finds, waits (up to
// 10 s) until they are gone, and returns what it killed.
func (e *HarnessEnv) KillStrays() []Proc {
	procs := e.StrayProcesses()
	for _, p := range procs {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	waitUntil(10*time.Second, func() bool { return len(e.StrayProcesses()) == 0 })
	return procs
}

// ProcessGroupMembers lists the live (non-zombie) processes of process
// group pgid.
func ProcessGroupMembers(pgid int) []Proc {
	return scanProcs(func(p Proc, _ []string) bool { return p.PGID == pgid })
}

// WaitProcessGroupGone waits up to timeout for process group pgid to have
// no live member and returns the members still alive at the end (nil
// when the group is gone). Processes of an exiting program may need a
// moment to finish after its leader has been reaped.
func WaitProcessGroupGone(pgid int, timeout time.Duration) []Proc {
	var left []Proc
	waitUntil(timeout, func() bool {
		left = ProcessGroupMembers(pgid)
		return len(left) == 0
	})
	return left
}

func waitUntil(timeout time.Duration, done func() bool) {
	deadline := time.Now().Add(timeout)
	for !done() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

func envMatcher(needles []string) func(Proc, []string) bool {
	return func(_ Proc, environ []string) bool {
		return slices.ContainsFunc(needles, func(n string) bool { return slices.Contains(environ, n) })
	}
}

// scanProcs returns the live processes other than the caller for which
// keep returns true. keep gets the process and its environment (nil when
// unreadable).
func scanProcs(keep func(Proc, []string) bool) []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Proc
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", ent.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// stat: pid (comm) state ppid pgrp ...
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		p := Proc{PID: pid}
		p.PGID, _ = strconv.Atoi(fields[2])
		var environ []string
		if b, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil {
			environ = strings.Split(string(b), "\x00")
		}
		if !keep(p, environ) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		p.Cmdline = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		out = append(out, p)
	}
	return out
}

// String formats a Proc for test logs.
func (p Proc) String() string { return fmt.Sprintf("pid %d (pgid %d): %s", p.PID, p.PGID, p.Cmdline) }

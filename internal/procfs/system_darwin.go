package procfs

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// system is this machine's process table: sysctl kern.proc.
var system source = kernProc{}

// UsageMeasured is false on macOS: sysctl kern.proc leaves a process's
// CPU time and resident size unset (only libproc's proc_pidinfo, which
// needs cgo, reads them), so they are reported absent.
const UsageMeasured = false

// kernProc reads processes through sysctl kern.proc.
type kernProc struct{}

// Stat returns the facts kern.proc.pid gives about pid.
func (kernProc) Stat(pid int) (ProcStat, error) {
	kp, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	if err != nil {
		return ProcStat{}, fmt.Errorf("procfs: process %d: %w", pid, err)
	}
	if len(kp) == 0 {
		return ProcStat{}, fmt.Errorf("procfs: process %d: %w", pid, fs.ErrNotExist)
	}
	return statOf(&kp[0]), nil
}

// Scan returns every process kern.proc.all lists, zombies included, in
// pid order.
func (kernProc) Scan() ([]ProcStat, error) {
	kp, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("procfs: list processes: %w", err)
	}
	out := make([]ProcStat, 0, len(kp))
	for i := range kp {
		out = append(out, statOf(&kp[i]))
	}
	slices.SortFunc(out, func(a, b ProcStat) int { return a.PID - b.PID })
	return out, nil
}

// statOf converts a kinfo_proc. The session id is not in it: getsid
// reads it (0 when the process is gone or a zombie). Threads, CPU time
// and RSS stay zero (UsageMeasured).
func statOf(k *unix.KinfoProc) ProcStat {
	pid := int(k.Proc.P_pid)
	comm := k.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	s := ProcStat{
		PID:        pid,
		Comm:       string(comm),
		State:      darwinState(k.Proc.P_stat),
		PPid:       int(k.Eproc.Ppid),
		PGrp:       int(k.Eproc.Pgid),
		StartTicks: startMicros(k.Proc.P_starttime.Sec, int64(k.Proc.P_starttime.Usec)),
	}
	if sid, err := unix.Getsid(pid); err == nil {
		s.Session = sid
	}
	return s
}

// Sampler answers a tick's questions — the members of a process group
// and the descendants of its leader — from one sysctl kern.proc.all.
// Memory and CPU are not measured (GroupSample.Usage is false). It is
// not safe for concurrent use.
type Sampler struct {
	tree
}

// Close releases nothing on macOS.
func (s *Sampler) Close() error { return nil }

// Sample sums the members of process group pgid and calls desc for every
// descendant of pid (pid excluded, as Descendants).
func (s *Sampler) Sample(pgid, pid int, desc func(int)) (GroupSample, error) {
	kp, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return GroupSample{}, fmt.Errorf("procfs: list processes: %w", err)
	}
	s.procs = s.procs[:0]
	for i := range kp {
		k := &kp[i]
		s.procs = append(s.procs, sampled{
			pid:   int(k.Proc.P_pid),
			ppid:  int(k.Eproc.Ppid),
			pgrp:  int(k.Eproc.Pgid),
			state: darwinState(k.Proc.P_stat),
		})
	}
	return s.sum(pgid, pid, desc, false), nil
}

// SelfPeakRSS returns this process's peak resident set size from
// getrusage, which macOS reports in bytes.
func SelfPeakRSS() (uint64, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("procfs: getrusage: %w", err)
	}
	return uint64(ru.Maxrss), nil //nolint:gosec // Maxrss is never negative
}

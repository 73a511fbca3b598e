// Package procfs reads process facts for the supervisor's ticks and for
// orphan detection: the members of a process group, the descendants of a
// process, and their memory and CPU use; and it waits for processes to
// exit (WatchExits). It only reads; it never signals or changes a
// process.
//
// On Linux the facts come from /proc. On macOS they come from sysctl
// kern.proc (no cgo): it names every process with its parent, group,
// state and start time, but not its memory or CPU time, which only
// libproc gives; there [UsageMeasured] is false and those figures are
// reported absent, never as zero. [FS] reads a /proc tree (or a copy of
// one) on any system, which the platform-neutral tests use.
//
// Processes come and go while they are read. A process that disappears
// between listing and reading is skipped, never an error, so totals cover
// the processes alive at the moment each was read (CPU time of processes
// that already exited and were reaped is not included).
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// ClockTicks is the kernel's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat. It is 100 on every Linux architecture Go supports.
const ClockTicks = 100

// DefaultRoot is where procfs is mounted.
const DefaultRoot = "/proc"

// ProcStat is the part of /proc/<pid>/stat the supervisor uses.
type ProcStat struct {
	PID     int
	Comm    string // executable name, as the kernel truncates it (15 bytes)
	State   byte   // R, S, D, Z, T, t, X, I, ...
	PPid    int
	PGrp    int
	Session int
	// UTimeTicks and STimeTicks are user and system CPU time in clock
	// ticks (ClockTicks per second).
	UTimeTicks uint64
	STimeTicks uint64
	// CPUSeconds is (utime+stime)/ClockTicks.
	CPUSeconds float64
	Threads    int
	// StartTicks identifies, with PID, a process across pid reuse: its
	// start time after boot in clock ticks on Linux, in microseconds
	// since the epoch on macOS. Compare it only with a figure read on the
	// same machine.
	StartTicks uint64
	// RSSBytes is the resident set size (rss pages × page size). It and
	// the CPU times are zero where UsageMeasured is false.
	RSSBytes uint64
}

// Totals sums the ProcStats of several processes.
type Totals struct {
	Procs      int
	RSSBytes   uint64
	CPUSeconds float64
}

// FS reads one procfs mount. The zero value reads DefaultRoot.
type FS struct {
	// Root is the procfs mount point; empty means DefaultRoot.
	Root string
	// PageSize converts rss pages to bytes; zero means os.Getpagesize().
	PageSize int
}

func (f FS) root() string {
	if f.Root == "" {
		return DefaultRoot
	}
	return f.Root
}

func (f FS) pageSize() int {
	if f.PageSize <= 0 {
		return os.Getpagesize()
	}
	return f.PageSize
}

// Stat reads /proc/<pid>/stat. A process that does not exist gives an
// error matching fs.ErrNotExist.
func (f FS) Stat(pid int) (ProcStat, error) {
	var buf [statBufSize]byte
	return f.stat(pid, buf[:])
}

// statBufSize holds any stat line: 52 numeric fields and a comm of at most
// 64 bytes fit in well under 1 KiB.
const statBufSize = 4096

// stat reads /proc/<pid>/stat into buf with three system calls (os.ReadFile
// costs about eight on a /proc file) and parses it.
func (f FS) stat(pid int, buf []byte) (ProcStat, error) {
	b, err := readSmall(filepath.Join(f.root(), strconv.Itoa(pid), "stat"), buf)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			// The process exited while its file was being read.
			return ProcStat{}, fmt.Errorf("procfs: process %d: %w", pid, fs.ErrNotExist)
		}
		return ProcStat{}, fmt.Errorf("procfs: %w", err)
	}
	s, err := ParseStat(b, f.pageSize())
	if err != nil {
		return ProcStat{}, fmt.Errorf("procfs: process %d: %w", pid, err)
	}
	return s, nil
}

// Scan returns the ProcStat of every process visible in /proc, in pid order.
func (f FS) Scan() ([]ProcStat, error) {
	ents, err := os.ReadDir(f.root())
	if err != nil {
		return nil, fmt.Errorf("procfs: list processes: %w (is /proc mounted?)", err)
	}
	out := make([]ProcStat, 0, len(ents))
	buf := make([]byte, statBufSize)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		s, err := f.stat(pid, buf)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // exited meanwhile
			}
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ProcStat) int { return a.PID - b.PID })
	return out, nil
}

// GroupMembers returns the pids (sorted) of every process whose process
// group is pgid, zombies included (their State is 'Z').
func (f FS) GroupMembers(pgid int) ([]int, error) { return groupMembers(f, pgid) }

// GroupStats is GroupMembers with each member's ProcStat, from one pass
// over /proc (no second read per member).
func (f FS) GroupStats(pgid int) ([]ProcStat, error) { return groupStats(f, pgid) }

// Descendants returns the pids (sorted) of every process descending from
// pid through parent links, pid itself excluded. A process re-parented to
// a subreaper or init after its parent died is no longer a descendant.
func (f FS) Descendants(pid int) ([]int, error) { return descendants(f, pid) }

// source is where process facts come from: a /proc tree (FS) or, on
// macOS, sysctl kern.proc.
type source interface {
	Stat(pid int) (ProcStat, error)
	Scan() ([]ProcStat, error)
}

func groupMembers(src source, pgid int) ([]int, error) {
	stats, err := groupStats(src, pgid)
	if err != nil {
		return nil, err
	}
	pids := make([]int, len(stats))
	for i, s := range stats {
		pids[i] = s.PID
	}
	return pids, nil
}

func groupStats(src source, pgid int) ([]ProcStat, error) {
	all, err := src.Scan()
	if err != nil {
		return nil, err
	}
	var out []ProcStat
	for _, s := range all {
		if s.PGrp == pgid {
			out = append(out, s)
		}
	}
	return out, nil
}

func descendants(src source, pid int) ([]int, error) {
	all, err := src.Scan()
	if err != nil {
		return nil, err
	}
	return DescendantsIn(all, pid), nil
}

// DescendantsIn computes Descendants from a Scan already taken, so one
// pass over /proc can serve several questions.
func DescendantsIn(all []ProcStat, pid int) []int {
	children := make(map[int][]int, len(all))
	for _, s := range all {
		if s.PID != s.PPid {
			children[s.PPid] = append(children[s.PPid], s.PID)
		}
	}
	var out []int
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Sum adds up RSS and CPU time of pids, skipping those that no longer
// exist.
func (f FS) Sum(pids []int) (Totals, error) { return sum(f, pids) }

func sum(src source, pids []int) (Totals, error) {
	var t Totals
	for _, pid := range pids {
		s, err := src.Stat(pid)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return t, err
		}
		t.Procs++
		t.RSSBytes += s.RSSBytes
		t.CPUSeconds += s.CPUSeconds
	}
	return t, nil
}

// SelfPeakRSS returns this process's peak resident set size (VmHWM in
// /proc/self/status) in bytes.
func (f FS) SelfPeakRSS() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(f.root(), "self", "status"))
	if err != nil {
		return 0, fmt.Errorf("procfs: %w", err)
	}
	return ParsePeakRSS(b)
}

// Package-level shortcuts on this system's process table (/proc on
// Linux, sysctl kern.proc on macOS).

// Stat returns the facts of process pid; see FS.Stat.
func Stat(pid int) (ProcStat, error) { return system.Stat(pid) }

// GroupMembers lists the members of process group pgid; see FS.GroupMembers.
func GroupMembers(pgid int) ([]int, error) { return groupMembers(system, pgid) }

// GroupStats returns the members of process group pgid with their stats;
// see FS.GroupStats.
func GroupStats(pgid int) ([]ProcStat, error) { return groupStats(system, pgid) }

// Scan returns the stats of every process; see FS.Scan.
func Scan() ([]ProcStat, error) { return system.Scan() }

// Descendants lists the descendants of pid; see FS.Descendants.
func Descendants(pid int) ([]int, error) { return descendants(system, pid) }

// Sum adds up RSS and CPU of pids; see FS.Sum.
func Sum(pids []int) (Totals, error) { return sum(system, pids) }

// ErrMalformed is returned for a stat or status file that cannot be parsed.
var ErrMalformed = errors.New("malformed /proc data")

// ParseStat parses the contents of a /proc/<pid>/stat file. The command
// name is the text between the first '(' and the last ')', since it may
// itself contain spaces, parentheses and newlines. pageSize converts rss
// pages to bytes.
func ParseStat(b []byte, pageSize int) (ProcStat, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 1 || closing < open {
		return ProcStat{}, fmt.Errorf("%w: no (comm) in stat", ErrMalformed)
	}
	var s ProcStat
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid <= 0 {
		return ProcStat{}, fmt.Errorf("%w: bad pid %q", ErrMalformed, b[:open])
	}
	s.PID = pid
	s.Comm = string(b[open+1 : closing])
	fields := bytes.Fields(b[closing+1:])
	// fields[0] is field 3 (state) of proc(5); rss is field 24.
	const (
		fState      = 0
		fPPid       = 1
		fPGrp       = 2
		fSession    = 3
		fUTime      = 11
		fSTime      = 12
		fThreads    = 17
		fStartTime  = 19
		fRSS        = 21
		fieldsWants = fRSS + 1
	)
	if len(fields) < fieldsWants {
		return ProcStat{}, fmt.Errorf("%w: %d fields after comm, want at least %d", ErrMalformed, len(fields), fieldsWants)
	}
	if len(fields[fState]) != 1 {
		return ProcStat{}, fmt.Errorf("%w: bad state %q", ErrMalformed, fields[fState])
	}
	s.State = fields[fState][0]
	ints := []struct {
		dst *int
		i   int
	}{{&s.PPid, fPPid}, {&s.PGrp, fPGrp}, {&s.Session, fSession}, {&s.Threads, fThreads}}
	for _, f := range ints {
		v, err := strconv.ParseInt(string(fields[f.i]), 10, 64)
		if err != nil {
			return ProcStat{}, fmt.Errorf("%w: field %d: %w", ErrMalformed, f.i+3, err)
		}
		*f.dst = int(v)
	}
	uints := []struct {
		dst *uint64
		i   int
	}{{&s.UTimeTicks, fUTime}, {&s.STimeTicks, fSTime}, {&s.StartTicks, fStartTime}}
	for _, f := range uints {
		v, err := strconv.ParseUint(string(fields[f.i]), 10, 64)
		if err != nil {
			return ProcStat{}, fmt.Errorf("%w: field %d: %w", ErrMalformed, f.i+3, err)
		}
		*f.dst = v
	}
	// rss is signed in the kernel's format string; negative never happens
	// in practice but must not wrap around.
	rss, err := strconv.ParseInt(string(fields[fRSS]), 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("%w: field %d: %w", ErrMalformed, fRSS+3, err)
	}
	if rss > 0 && pageSize > 0 {
		if uint64(rss) > math.MaxUint64/uint64(pageSize) {
			return ProcStat{}, fmt.Errorf("%w: rss %d pages overflows", ErrMalformed, rss)
		}
		s.RSSBytes = uint64(rss) * uint64(pageSize)
	}
	s.CPUSeconds = float64(s.UTimeTicks+s.STimeTicks) / ClockTicks
	return s, nil
}

// ParsePeakRSS extracts VmHWM (in kB) from a /proc/<pid>/status file and
// returns it in bytes.
func ParsePeakRSS(b []byte) (uint64, error) {
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("%w: VmHWM line %q", ErrMalformed, line)
		}
		kb, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: VmHWM: %w", ErrMalformed, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("%w: no VmHWM line (kernel thread?)", ErrMalformed)
}

// readSmall reads a whole small file into buf. A file larger than buf is
// an error (ErrMalformed), never silently truncated.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer func() { _ = unix.Close(fd) }()
	n := 0
	for {
		if n == len(buf) {
			return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrMalformed, path, len(buf))
		}
		m, err := unix.Read(fd, buf[n:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
}

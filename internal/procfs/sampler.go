package procfs

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// GroupSample is what one supervisor tick reports about a process group.
type GroupSample struct {
	// Alive is true when the group's leader exists and is not a zombie.
	Alive      bool
	Procs      int
	RSSBytes   uint64
	CPUSeconds float64
}

// Sampler answers a tick's questions — the members of a process group
// and the descendants of its leader — from one pass over /proc, and
// reuses its memory and its open /proc directory from one call to the
// next: once warm, a sample allocates nothing. It is not safe for
// concurrent use; Close releases the directory.
type Sampler struct {
	FS
	dirfd  int
	opened bool
	dents  []byte
	path   []byte
	buf    []byte
	procs  []sampled
	queue  []int

	// The walk (see Sample): children files work here (0 unknown, 1 yes,
	// -1 no), samples since the last full scan, and the group members
	// the last sample found, checked again even when the walk misses
	// them (a member whose parent died is no longer a descendant).
	children int
	walks    int // walks left before the next full pass
	members  []int
	kids     []byte
}

// FullScanEvery is how many samples a Sampler takes by walking the
// harness's process tree between two full passes over /proc.
const FullScanEvery = 30

// sampled is the part of a stat line a sample uses.
type sampled struct {
	pid, ppid, pgrp int
	threads         int
	state           byte
	rss             uint64
	cpu             float64
}

// Close releases the /proc directory the sampler keeps open.
func (s *Sampler) Close() error {
	if !s.opened {
		return nil
	}
	s.opened = false
	return unix.Close(s.dirfd)
}

// Sample sums the members of process group pgid and calls desc for every
// descendant of pid (pid excluded, as Descendants), reading each
// process's stat once.
//
// The first sample, one in every FullScanEvery after it, and every sample
// where the kernel keeps no children lists read every process on the
// machine. The others walk the tree down from pid through the kernel's
// children lists (/proc/<pid>/task/<tid>/children) and read the stat of
// the processes found there and of the group's members found last time:
// a member that left the tree (its parent died) before any sample saw it
// is counted from the next full pass on.
func (s *Sampler) Sample(pgid, pid int, desc func(int)) (GroupSample, error) {
	if err := s.open(); err != nil {
		return GroupSample{}, err
	}
	if s.children == 0 {
		s.children = -1
		if _, err := os.Stat(filepath.Join(s.root(), "self", "task", strconv.Itoa(os.Getpid()), "children")); err == nil {
			s.children = 1
		}
	}
	walked := false
	if s.children > 0 && s.walks > 0 {
		if err := s.walk(pid); err == nil {
			walked = true
			s.walks--
		}
	}
	if !walked {
		if err := s.scan(); err != nil {
			return GroupSample{}, err
		}
		s.walks = FullScanEvery - 1
	}
	s.members = s.members[:0]
	var g GroupSample
	for i := range s.procs {
		p := &s.procs[i]
		if p.pgrp != pgid {
			continue
		}
		s.members = append(s.members, p.pid)
		if p.pid == pgid && p.state != 'Z' {
			g.Alive = true
		}
		g.Procs++
		g.RSSBytes += p.rss
		g.CPUSeconds += p.cpu
	}
	if desc != nil {
		s.queue = append(s.queue[:0], pid)
		q := s.queue
		for next := 0; next < len(q); next++ {
			parent := q[next]
			for i := range s.procs {
				if c := &s.procs[i]; c.ppid == parent && c.pid != c.ppid && c.pid != pid && !slices.Contains(q, c.pid) {
					desc(c.pid)
					q = append(q, c.pid)
				}
			}
		}
		s.queue = q[:0]
	}
	return g, nil
}

// open opens the /proc directory and the buffers on first use.
func (s *Sampler) open() error {
	if s.opened {
		return nil
	}
	fd, err := unix.Open(s.root(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("procfs: list processes: %w (is /proc mounted?)", err)
	}
	s.dirfd, s.opened = fd, true
	s.dents = make([]byte, 32<<10)
	s.buf = make([]byte, statBufSize)
	s.path = make([]byte, 0, 64)
	return nil
}

// walk reads the stat of pid, of its descendants found through the
// children lists, and of the members the last sample found, into
// s.procs (each once).
func (s *Sampler) walk(pid int) error {
	s.procs = s.procs[:0]
	page := s.pageSize()
	s.queue = append(s.queue[:0], pid)
	for _, m := range s.members {
		if !slices.Contains(s.queue, m) {
			s.queue = append(s.queue, m)
		}
	}
	for next := 0; next < len(s.queue); next++ {
		p, ok, err := s.read(s.queue[next], page)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		s.procs = append(s.procs, p)
		if err := s.addChildren(p.pid, p.threads); err != nil {
			return err
		}
	}
	return nil
}

// addChildren queues the children of process pid: the children list of
// each of its threads (only its own when it has one thread).
func (s *Sampler) addChildren(pid, threads int) error {
	if threads <= 1 {
		return s.readChildren(pid, pid)
	}
	s.path = strconv.AppendInt(s.path[:0], int64(pid), 10)
	s.path = append(s.path, "/task\x00"...)
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(s.dirfd), uintptr(unsafe.Pointer(&s.path[0])), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		if errno == unix.ENOENT || errno == unix.ESRCH {
			return nil
		}
		return fmt.Errorf("procfs: open %d/task: %w", pid, errno)
	}
	defer func() { _ = unix.Close(int(fd)) }()
	for {
		n, err := unix.Getdents(int(fd), s.dents)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil // the process went away meanwhile
		}
		if n <= 0 {
			return nil
		}
		if err := eachDentPID(s.dents[:n], func(tid int) error { return s.readChildren(pid, tid) }); err != nil {
			return err
		}
	}
}

// readChildren queues the pids in <pid>/task/<tid>/children.
func (s *Sampler) readChildren(pid, tid int) error {
	s.path = strconv.AppendInt(s.path[:0], int64(pid), 10)
	s.path = append(s.path, "/task/"...)
	s.path = strconv.AppendInt(s.path, int64(tid), 10)
	s.path = append(s.path, "/children\x00"...)
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(s.dirfd), uintptr(unsafe.Pointer(&s.path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		if errno == unix.ENOENT || errno == unix.ESRCH {
			return nil
		}
		return fmt.Errorf("procfs: open %d/task/%d/children: %w", pid, tid, errno)
	}
	defer func() { _ = unix.Close(int(fd)) }()
	carry := 0 // digits of a pid cut by the end of a read
	for {
		if cap(s.kids) == 0 {
			s.kids = make([]byte, 4096)
		}
		n, err := unix.Read(int(fd), s.kids[carry:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil // the thread went away meanwhile
		}
		b := s.kids[:carry+n]
		if n == 0 {
			b = append(b, ' ')
		}
		start := 0
		for i, c := range b {
			if c != ' ' && c != '\n' {
				continue
			}
			if i > start {
				v, ok := atou(b[start:i])
				if !ok || v > math.MaxInt32 {
					return fmt.Errorf("%w: %d/task/%d/children", ErrMalformed, pid, tid)
				}
				if c := int(v); !slices.Contains(s.queue, c) {
					s.queue = append(s.queue, c)
				}
			}
			start = i + 1
		}
		if n == 0 {
			return nil
		}
		carry = copy(s.kids, b[start:])
		if carry == len(s.kids) {
			return fmt.Errorf("%w: %d/task/%d/children", ErrMalformed, pid, tid)
		}
	}
}

// eachDentPID calls f with the number each entry of b (linux_dirent64
// records, as getdents64 fills them) names, skipping the entries that
// name none, until f fails.
func eachDentPID(b []byte, f func(int) error) error {
	for len(b) >= 19 {
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
		if reclen < 19 || reclen > len(b) {
			return fmt.Errorf("%w: directory entry of %d bytes", ErrMalformed, reclen)
		}
		pid := dentPID(b[19:reclen])
		b = b[reclen:]
		if pid > 0 {
			if err := f(pid); err != nil {
				return err
			}
		}
	}
	return nil
}

// dentPID is the number a /proc directory entry's name spells, or -1.
func dentPID(name []byte) int {
	pid := 0
	for _, c := range name {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || pid > math.MaxInt32 {
			return -1
		}
		pid = pid*10 + int(c-'0')
	}
	if pid == 0 {
		return -1
	}
	return pid
}

// scan reads every process's stat into s.procs.
func (s *Sampler) scan() error {
	if _, err := unix.Seek(s.dirfd, 0, 0); err != nil {
		return fmt.Errorf("procfs: list processes: %w", err)
	}
	s.procs = s.procs[:0]
	page := s.pageSize()
	for {
		n, err := unix.Getdents(s.dirfd, s.dents)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("procfs: list processes: %w", err)
		}
		if n <= 0 {
			return nil
		}
		err = eachDentPID(s.dents[:n], func(pid int) error {
			p, ok, err := s.read(pid, page)
			if ok {
				s.procs = append(s.procs, p)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
}

// read reads and parses <pid>/stat; ok is false when the process is gone.
func (s *Sampler) read(pid, page int) (sampled, bool, error) {
	s.path = strconv.AppendInt(s.path[:0], int64(pid), 10)
	s.path = append(s.path, "/stat\x00"...)
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(s.dirfd), uintptr(unsafe.Pointer(&s.path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		if errno == unix.ENOENT || errno == unix.ESRCH {
			return sampled{}, false, nil
		}
		return sampled{}, false, fmt.Errorf("procfs: open %d/stat: %w", pid, errno)
	}
	n := 0
	var rerr error
	for {
		if n == len(s.buf) {
			rerr = fmt.Errorf("%w: %d/stat is larger than %d bytes", ErrMalformed, pid, len(s.buf))
			break
		}
		m, err := unix.Read(int(fd), s.buf[n:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			rerr = err
			break
		}
		if m == 0 {
			break
		}
		n += m
		if s.buf[n-1] == '\n' {
			break // the kernel writes a stat line whole: no need to read EOF
		}
	}
	_ = unix.Close(int(fd))
	if rerr != nil {
		if errors.Is(rerr, unix.ESRCH) {
			return sampled{}, false, nil // exited while being read
		}
		return sampled{}, false, fmt.Errorf("procfs: read %d/stat: %w", pid, rerr)
	}
	p, ok := parseSampled(s.buf[:n], page)
	if !ok {
		return sampled{}, false, fmt.Errorf("%w: %d/stat", ErrMalformed, pid)
	}
	return p, true, nil
}

// parseSampled reads the fields a sample uses from a stat line, as
// ParseStat does, without allocating.
func parseSampled(b []byte, pageSize int) (sampled, bool) {
	var p sampled
	open, closing := -1, -1
	for i, c := range b {
		if c == '(' && open < 0 {
			open = i
		}
		if c == ')' {
			closing = i
		}
	}
	if open < 1 || closing < open {
		return p, false
	}
	pid, ok := atoi(trimSpace(b[:open]))
	if !ok || pid <= 0 || pid > math.MaxInt {
		return p, false
	}
	p.pid = int(pid)
	// Fields after the comm, 0-based as in ParseStat: 0 state, 1 ppid,
	// 2 pgrp, 11 utime, 12 stime, 21 rss.
	rest := b[closing+1:]
	var utime, stime uint64
	field := 0
	for field <= 21 {
		for len(rest) > 0 && isSpace(rest[0]) {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return p, false
		}
		end := 0
		for end < len(rest) && !isSpace(rest[end]) {
			end++
		}
		f := rest[:end]
		rest = rest[end:]
		switch field {
		case 0:
			if len(f) != 1 {
				return p, false
			}
			p.state = f[0]
		case 1, 2:
			v, ok := atoi(f)
			if !ok {
				return p, false
			}
			if field == 1 {
				p.ppid = int(v)
			} else {
				p.pgrp = int(v)
			}
		case 17:
			v, ok := atoi(f)
			if !ok {
				return p, false
			}
			p.threads = int(v)
		case 11, 12:
			v, ok := atou(f)
			if !ok {
				return p, false
			}
			if field == 11 {
				utime = v
			} else {
				stime = v
			}
		case 21:
			v, ok := atoi(f)
			if !ok {
				return p, false
			}
			if v > 0 && pageSize > 0 {
				if uint64(v) > math.MaxUint64/uint64(pageSize) {
					return p, false
				}
				p.rss = uint64(v) * uint64(pageSize)
			}
		}
		field++
	}
	p.cpu = float64(utime+stime) / ClockTicks
	return p, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// atou parses a plain decimal number (no sign), false on anything else or
// an overflow.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// atoi parses a decimal number with an optional sign, as
// strconv.ParseInt(s, 10, 64) accepts it.
func atoi(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	v, ok := atou(b)
	switch {
	case !ok:
		return 0, false
	case neg && v <= 1<<63:
		return -int64(v), true //nolint:gosec // v <= 1<<63: -int64 wraps to MinInt64 exactly there
	case !neg && v <= math.MaxInt64:
		return int64(v), true
	}
	return 0, false
}

package procfs

import (
	"errors"
	"fmt"
	"math"
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
}

// sampled is the part of a stat line a sample uses.
type sampled struct {
	pid, ppid, pgrp int
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
func (s *Sampler) Sample(pgid, pid int, desc func(int)) (GroupSample, error) {
	if err := s.scan(); err != nil {
		return GroupSample{}, err
	}
	var g GroupSample
	for i := range s.procs {
		p := &s.procs[i]
		if p.pgrp != pgid {
			continue
		}
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

// scan reads every process's stat into s.procs.
func (s *Sampler) scan() error {
	if !s.opened {
		fd, err := unix.Open(s.root(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("procfs: list processes: %w (is /proc mounted?)", err)
		}
		s.dirfd, s.opened = fd, true
		s.dents = make([]byte, 32<<10)
		s.buf = make([]byte, statBufSize)
		s.path = make([]byte, 0, 32)
	} else if _, err := unix.Seek(s.dirfd, 0, 0); err != nil {
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
		for b := s.dents[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < 19 || reclen > len(b) {
				return fmt.Errorf("%w: directory entry of %d bytes", ErrMalformed, reclen)
			}
			name := b[19:reclen]
			b = b[reclen:]
			pid := 0
			for _, c := range name {
				if c == 0 {
					break
				}
				if c < '0' || c > '9' || pid > math.MaxInt32 {
					pid = -1
					break
				}
				pid = pid*10 + int(c-'0')
			}
			if pid <= 0 {
				continue
			}
			p, ok, err := s.read(pid, page)
			if err != nil {
				return err
			}
			if ok {
				s.procs = append(s.procs, p)
			}
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

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
	tree

	// The walk (see Sample): children files work here (0 unknown, 1 yes,
	// -1 no) and samples since the last full scan. The group members
	// the last sample found (tree.members) are read again even when the
	// walk misses them (a member whose parent died is no longer a
	// descendant).
	children int
	walks    int // walks left before the next full pass
	kids     []byte
}

// FullScanEvery is how many samples a Sampler takes by walking the
// harness's process tree between two full passes over /proc.
const FullScanEvery = 30

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
	return s.sum(pgid, pid, desc, true), nil
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

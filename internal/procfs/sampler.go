package procfs

import (
	"math"
	"slices"
)

// GroupSample is what one supervisor tick reports about a process group.
type GroupSample struct {
	// Alive is true when the group's leader exists and is not a zombie.
	Alive bool
	Procs int
	// Usage is true when RSSBytes and CPUSeconds were measured; where
	// they were not (macOS, see UsageMeasured) both are zero and callers
	// report them absent.
	Usage      bool
	RSSBytes   uint64
	CPUSeconds float64
}

// sampled is the part of a stat line a sample uses.
type sampled struct {
	pid, ppid, pgrp int
	threads         int
	state           byte
	rss             uint64
	cpu             float64
}

// tree is the processes one sample read, with the memory summing them
// reuses from one sample to the next.
type tree struct {
	procs []sampled
	queue []int
	// members are the group's members the last sample found.
	members []int
}

// sum sums the members of process group pgid among t.procs and calls desc
// for every descendant of pid (pid excluded). usage says whether the
// procs' rss and cpu were measured.
func (s *tree) sum(pgid, pid int, desc func(int), usage bool) GroupSample {
	s.members = s.members[:0]
	g := GroupSample{Usage: usage}
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
	if !usage {
		g.RSSBytes, g.CPUSeconds = 0, 0
	}
	return g
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

package usage

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// A pair is two numbers kept in order of the first, a. The identities a
// run counts, the calls it finds repeated and the identities it saves
// are pairs, gathered in a pairSpill: a corpus's identities need not fit
// in memory.
type pair struct{ a, b uint64 }

// pairSize is a pair's size on disk.
const pairSize = 16

// pairSpill gathers pairs in a buffer of at most limit; each full buffer
// is sorted by a and written as a run to a temporary file (unlinked once
// made, so nothing is left behind however the process ends). merge gives
// them all back in order of a.
type pairSpill struct {
	buf   []pair
	limit int
	// inOrder: pairs are added in order of a already: not sorted again,
	// and written as one run.
	inOrder bool
	f       *os.File
	end     int64 // the file's length
	runs    []spillRun
	err     error
}

// spillRun is a run's place in the file: off its first byte, n its pairs.
type spillRun struct{ off, n int64 }

func newPairSpill(limit int, inOrder bool) *pairSpill {
	return &pairSpill{limit: limit, inOrder: inOrder}
}

func (s *pairSpill) add(p pair) {
	if len(s.buf) >= s.limit {
		s.spill()
	}
	s.grow(1)
	s.buf = append(s.buf, p)
}

// addAll adds ps.
func (s *pairSpill) addAll(ps []pair) {
	s.grow(len(ps))
	for len(ps) > 0 {
		if len(s.buf) >= s.limit {
			s.spill()
		}
		n := min(len(ps), s.limit-len(s.buf))
		s.buf = append(s.buf, ps[:n]...)
		ps = ps[n:]
	}
}

// grow makes room for n more pairs, up to the limit. The buffer grows
// fourfold (from 8 Ki pairs): a few calls cost little, many leave few
// copies behind.
func (s *pairSpill) grow(n int) {
	if n += len(s.buf); cap(s.buf) < s.limit && n > cap(s.buf) {
		c := max(cap(s.buf), 8<<10)
		for c < n {
			c *= 4
		}
		s.buf = append(make([]pair, 0, min(c, s.limit)), s.buf...)
	}
}

// spill writes the buffer as a run and empties it.
func (s *pairSpill) spill() {
	if len(s.buf) == 0 {
		return
	}
	s.sortBuf()
	if s.err == nil && s.f == nil {
		s.f, s.err = spillFile()
	}
	if s.err == nil {
		s.err = writePairs(s.f, s.end, s.buf)
		if s.inOrder && len(s.runs) == 1 {
			s.runs[0].n += int64(len(s.buf))
		} else {
			s.runs = append(s.runs, spillRun{off: s.end, n: int64(len(s.buf))})
		}
		s.end += int64(len(s.buf)) * pairSize
	}
	s.buf = s.buf[:0]
	if len(s.runs) == maxRuns && s.err == nil {
		s.mergeRuns()
	}
}

// maxRuns is the most runs a spill keeps: reading them back together
// costs a chunk's buffer (32 KiB) each, so past it they are merged into
// one, and memory stays the same whatever the number of pairs.
const maxRuns = 64

// mergeRuns writes the runs' pairs, merged, as one run after them (the
// space they took is not reused).
func (s *pairSpill) mergeRuns() {
	srcs := make([]pairSource, len(s.runs))
	var n int64
	for i, r := range s.runs {
		srcs[i] = newFileRun(s.f, r)
		n += r.n
	}
	m := newMerger(srcs)
	out := make([]pair, 0, spillChunk)
	off := s.end
	for {
		p, ok := m.next()
		if ok {
			out = append(out, p)
		}
		if len(out) == cap(out) || (!ok && len(out) > 0) {
			if s.err = writePairs(s.f, off, out); s.err != nil {
				return
			}
			off += int64(len(out)) * pairSize
			out = out[:0]
		}
		if !ok {
			break
		}
	}
	if s.err = m.err(); s.err != nil {
		return
	}
	s.runs = append(s.runs[:0], spillRun{off: s.end, n: n})
	s.end = off
}

func (s *pairSpill) sortBuf() {
	if !s.inOrder {
		sortPairs(s.buf)
	}
}

// spillFile makes an unlinked temporary file (0600) in the system's
// temporary folder.
func spillFile() (*os.File, error) {
	f, err := os.CreateTemp("", "lifeloop-usage-*")
	if err != nil {
		return nil, fmt.Errorf("%w (the call identities of a large corpus go to a temporary file: set TMPDIR to a writable folder)", err)
	}
	os.Remove(f.Name())
	return f, nil
}

// spillChunk is how many pairs are written or read at once.
const spillChunk = 2048

func writePairs(f *os.File, off int64, ps []pair) error {
	b := make([]byte, 0, spillChunk*pairSize)
	for len(ps) > 0 {
		n := min(len(ps), spillChunk)
		b = b[:0]
		for _, p := range ps[:n] {
			b = binary.LittleEndian.AppendUint64(b, p.a)
			b = binary.LittleEndian.AppendUint64(b, p.b)
		}
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
		ps = ps[n:]
	}
	return nil
}

// close drops the spill's file.
func (s *pairSpill) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// merge returns a merger of every pair added, and of more (other sorted
// sources, such as the index's identities), in order of a; pairs of equal
// a come in no set order.
func (s *pairSpill) merge(more ...pairSource) *merger {
	s.sortBuf()
	srcs := make([]pairSource, 0, len(s.runs)+1+len(more))
	for _, r := range s.runs {
		srcs = append(srcs, newFileRun(s.f, r))
	}
	if len(s.buf) > 0 {
		srcs = append(srcs, &memRun{ps: s.buf})
	}
	srcs = append(srcs, more...)
	return newMerger(srcs)
}

// pairSource gives pairs in order of a; ok false at its end. An error
// ends it (err tells).
type pairSource interface {
	next() (p pair, ok bool)
	err() error
}

type memRun struct{ ps []pair }

func (m *memRun) next() (pair, bool) {
	if len(m.ps) == 0 {
		return pair{}, false
	}
	p := m.ps[0]
	m.ps = m.ps[1:]
	return p, true
}

func (m *memRun) err() error { return nil }

// records reads fixed-size records from a file a chunk at a time.
type records struct {
	f         *os.File
	off, left int64 // the next chunk's offset, the records left
	size      int64 // a record's size
	buf       []byte
	e         error
}

// next is the next record's bytes (valid until the next call).
func (r *records) next() ([]byte, bool) {
	if len(r.buf) == 0 {
		if r.left == 0 || r.e != nil {
			return nil, false
		}
		n := min(r.left, spillChunk)
		if cap(r.buf) == 0 {
			r.buf = make([]byte, spillChunk*r.size)
		}
		r.buf = r.buf[:n*r.size]
		if _, err := r.f.ReadAt(r.buf, r.off); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			r.e, r.buf = err, r.buf[:0]
			return nil, false
		}
		r.off += n * r.size
		r.left -= n
	}
	b := r.buf[:r.size]
	r.buf = r.buf[r.size:]
	return b, true
}

// fileRun reads a run back.
type fileRun struct{ records }

func newFileRun(f *os.File, r spillRun) *fileRun {
	return &fileRun{records{f: f, off: r.off, left: r.n, size: pairSize}}
}

func (r *fileRun) next() (pair, bool) {
	b, ok := r.records.next()
	if !ok {
		return pair{}, false
	}
	return pair{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}, true
}

func (r *fileRun) err() error { return r.e }

// merger merges sources with a heap of their next pairs.
type merger struct {
	heads []pair
	srcs  []pairSource
	all   []pairSource
}

func newMerger(srcs []pairSource) *merger {
	m := &merger{all: srcs}
	for _, s := range srcs {
		if p, ok := s.next(); ok {
			m.heads = append(m.heads, p)
			m.srcs = append(m.srcs, s)
		}
	}
	for i := len(m.heads)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

// next is the smallest pair left.
func (m *merger) next() (pair, bool) {
	if len(m.heads) == 0 {
		return pair{}, false
	}
	p := m.heads[0]
	if q, ok := m.srcs[0].next(); ok {
		m.heads[0] = q
	} else {
		last := len(m.heads) - 1
		m.heads[0], m.srcs[0] = m.heads[last], m.srcs[last]
		m.heads, m.srcs = m.heads[:last], m.srcs[:last]
	}
	m.down(0)
	return p, true
}

func (m *merger) down(i int) {
	n := len(m.heads)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && m.heads[r].a < m.heads[l].a {
			c = r
		}
		if m.heads[i].a <= m.heads[c].a {
			return
		}
		m.heads[i], m.heads[c] = m.heads[c], m.heads[i]
		m.srcs[i], m.srcs[c] = m.srcs[c], m.srcs[i]
		i = c
	}
}

// err is the first source's error, once the merge has ended.
func (m *merger) err() error {
	for _, s := range m.all {
		if err := s.err(); err != nil {
			return err
		}
	}
	return nil
}

// sortPairs sorts ps by a, in place. The a's are hashes, spread evenly:
// ps are dealt into piles by their top 12 bits (a counting sort that
// swaps each pair into its pile), and each small pile sorted on its own.
func sortPairs(ps []pair) {
	if len(ps) < 256 {
		slices.SortFunc(ps, cmpPairs)
		return
	}
	const bits = 12
	var count, start, next [1 << bits]int
	for _, p := range ps {
		count[p.a>>(64-bits)]++
	}
	for d, sum := 0, 0; d < len(count); d++ {
		start[d], next[d] = sum, sum
		sum += count[d]
	}
	for d := range count {
		end := start[d] + count[d]
		for next[d] < end {
			p := ps[next[d]]
			// p goes to its pile, the pair it displaces to its own, and
			// so on until one belongs here.
			for t := int(p.a >> (64 - bits)); t != d; t = int(p.a >> (64 - bits)) {
				ps[next[t]], p = p, ps[next[t]]
				next[t]++
			}
			ps[next[d]] = p
			next[d]++
		}
	}
	for d := range count {
		if count[d] > 1 {
			slices.SortFunc(ps[start[d]:start[d]+count[d]], cmpPairs)
		}
	}
}

func cmpPairs(x, y pair) int {
	switch {
	case x.a < y.a:
		return -1
	case x.a > y.a:
		return 1
	}
	return 0
}

// Package usage is `lifeloop usage`: the tokens and costs of every
// harness session on the machine, read through each harness's
// adapters.UsageReader, kept in an index so a run reads only what changed,
// and grouped into a report (docs/usage.md).
package usage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/pricing"
)

// Source is a harness whose files are read.
type Source struct {
	Harness string
	Reader  adapters.UsageReader
	// Store is set instead of Reader for a harness whose usage lives in
	// a database (store.go).
	Store adapters.UsageStore
}

// Scanner reads the sources' files into the index.
type Scanner struct {
	Sources []Source
	Getenv  func(string) string
	Pricer  *pricing.Pricer
	// StateDir holds the index (<StateDir>/usage/index.bin).
	StateDir string
	// Location is the time zone of days.
	Location *time.Location
	// Warn receives one line per problem (a damaged file, an index
	// rebuilt), each reported once.
	Warn io.Writer
	// BeforeReading, when set, is called once before the run reads its
	// first file or database or writes the index: never in a run with
	// nothing new.
	BeforeReading func()
}

// Scan is what a scan found: every file's sums.
type Scan struct {
	idx *index
	// Files counts the files, BytesRead the bytes read this run.
	Files     int
	BytesRead int64
}

// Run reads what changed since the last run and saves the index. An
// index that cannot be saved gives the scan and the error; a scan that
// cannot count each call once (its temporary file), no scan.
func (s *Scanner) Run() (*Scan, error) {
	// The warnings wait for the end: a run that finds the index's
	// identities damaged (only when it reads them) is made again with a
	// new index, and says only that run's.
	// A file that cannot be read again (gone between its two readings)
	// has the run made again once, from the same index: the file is then
	// read whole or not at all, and its calls that other files copied
	// count there.
	w := s.Warn
	var held bytes.Buffer
	if w != nil {
		s.Warn = &held
	}
	sc, err := s.run(false, false)
	if errors.Is(err, errReadAgain) {
		held.Reset()
		sc, err = s.run(false, true)
	}
	s.Warn = w
	if errors.Is(err, errIndexDamaged) {
		return s.run(true, true)
	}
	if w != nil {
		w.Write(held.Bytes())
	}
	return sc, err
}

// errReadAgain ends a run that could not read a file again.
var errReadAgain = errors.New("a file could not be read again")

// run is Run, the index ignored when rebuild; lastTry: a file that
// cannot be read again does not end it.
func (s *Scanner) run(rebuild, lastTry bool) (*Scan, error) {
	loc := s.Location
	if loc == nil {
		loc = time.Local
	}
	path := filepath.Join(s.StateDir, "usage", IndexFile)
	// The index loads while the harnesses' files are listed and stat'ed:
	// a run with nothing new is mostly these two.
	var idx *index
	var why string
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		if rebuild {
			idx, why = emptyIndex(s.Pricer.Fingerprint(), loc.String()), "damaged"
			return
		}
		idx, why = loadIndex(path, s.Pricer.Fingerprint(), loc.String())
	}()
	files, infos, listErrs := s.list()
	<-loaded
	defer idx.close()
	if why != "" {
		s.warn("the usage index %s was %s: rebuilt", path, why)
	}
	for _, msg := range listErrs {
		s.warn("%s", msg)
	}
	// The index is written only when something changed: a run with
	// nothing new reads and writes no file but the index, and finds each
	// file's record by walking both lists in path order.
	olds, matched := idx.match(files)
	dirty := idx.records() == 0 || matched < idx.records()
	sc := &Scan{idx: idx, Files: len(files)}
	// The files that changed are read (a path two sources list, once),
	// then each call is counted once (identities.go).
	var todo []int
	for i := range files {
		if i > 0 && files[i].path == files[i-1].path {
			continue
		}
		if st := infos[i]; st.err == nil && changed(olds[i], st) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 && !dirty {
		for i, st := range infos {
			if st.err != nil {
				s.warn("%s: %v", files[i].path, st.err)
			}
		}
		return sc, nil
	}
	if s.BeforeReading != nil {
		s.BeforeReading()
	}
	byPath := idx.byPath()
	if matched < len(byPath) {
		present := make(map[string]bool, len(files))
		for _, f := range files {
			present[f.path] = true
		}
		for p := range byPath {
			if !present[p] {
				delete(byPath, p)
			}
		}
	}
	ids := newIdentities(len(files))
	defer ids.close()
	results := s.readChanged(files, infos, todo, idx, loc, ids)
	for i, f := range files {
		if st := infos[i]; st.err != nil {
			s.warn("%s: %v", f.path, st.err)
			continue
		}
		res := results[i]
		if res == nil {
			continue
		}
		if s.Warn != nil && res.warnings != "" {
			io.WriteString(s.Warn, res.warnings)
		}
		if res.rec != nil {
			byPath[f.path] = res.rec
		} else {
			ids.giveUp(i, math.MaxUint32)
		}
		sc.BytesRead += res.read
		if res.err != nil {
			s.warn("%s: %v", f.path, res.err)
		}
	}
	// Each identity is counted once: the loaded records' that stay
	// theirs, then the run's, in place order.
	kept := make([]int32, idx.loaded)
	for i := range kept {
		kept[i] = -1
	}
	for i, f := range files {
		if rec := byPath[f.path]; rec != nil && rec.loadedAt > 0 {
			kept[rec.loadedAt-1] = int32(i)
		}
	}
	var old pairSource
	if idx.keys != nil {
		old = idx.keys
	}
	winners, lost, err := ids.resolve(old, kept)
	defer winners.close()
	defer lost.close()
	if errors.Is(err, errIndexDamaged) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("usage: counting each call once: %w", err)
	}
	// A file with calls counted elsewhere first is read again without
	// them.
	m := lost.merge()
	calls := newLostCalls(m)
	r := s.newReader(loc, nil, runtime.GOMAXPROCS(0) > 1)
	r.lost = calls
	for {
		i, ok := calls.nextFile()
		if !ok {
			break
		}
		res := results[i]
		if res == nil || res.rec == nil {
			calls.skipFile(i) // given up: its calls were not counted
			continue
		}
		f := files[i]
		r.begin(i, res.from)
		var rec *fileRecord
		var n int64
		if f.db != nil {
			rec, err = r.databaseAgain(res, f.path, f.harness, f.db)
		} else {
			r.limit = res.start + res.read
			rec, n, err = r.file(res.old, f.path, f.harness, f.r, infos[i])
			r.limit = 0
		}
		calls.skipFile(i)
		sc.BytesRead += n
		if err != nil && !lastTry {
			return nil, errReadAgain
		}
		if err != nil {
			// Counted neither way: the file is read from its start
			// next run.
			s.warn("%s: %v (read again from its start next run)", f.path, err)
			if res.old == nil {
				delete(byPath, f.path)
			} else {
				c := *res.old
				c.Size, c.Offset, c.loadedAt = -1, math.MaxInt64, 0
				byPath[f.path] = &c
			}
			continue
		}
		byPath[f.path] = rec
	}
	if err := m.err(); err != nil {
		return nil, fmt.Errorf("usage: counting each call once: %w", err)
	}
	if err := idx.save(path, files, winners); err != nil {
		return sc, fmt.Errorf("usage: saving the index %s: %w", path, err)
	}
	return sc, nil
}

// readChanged reads the files in todo (numbers in files), each as a
// continuation of its record in idx, and returns what each reading made.
// Files are read side by side, a file read alone is read ahead;
// databases are read after them, in order.
func (s *Scanner) readChanged(files []file, infos []fileStat, todo []int, idx *index, loc *time.Location, ids *identities) []*readResult {
	results := make([]*readResult, len(files))
	var onDisk []int
	for _, i := range todo {
		if files[i].db == nil {
			onDisk = append(onDisk, i)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(onDisk))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.newReader(loc, ids, workers == 1 && runtime.GOMAXPROCS(0) > 1)
			for j := w; j < len(onDisk); j += workers {
				i := onDisk[j]
				f, old := files[i], idx.files[files[i].path]
				r.begin(i, 0)
				res := &readResult{old: old}
				if !fresh(old, f.harness, infos[i]) {
					res.start = old.Offset
				}
				res.rec, res.read, res.err = r.file(old, f.path, f.harness, f.r, infos[i])
				r.handOver()
				res.warnings = r.warnings.String()
				results[i] = res
			}
		}()
	}
	wg.Wait()
	r := s.newReader(loc, ids, false)
	for _, i := range todo {
		f := files[i]
		if f.db == nil {
			continue
		}
		r.begin(i, 0)
		res := &readResult{old: idx.files[f.path]}
		res.rec, res.err = r.database(res, f.path, f.harness, f.db, infos[i])
		r.handOver()
		res.warnings = r.warnings.String()
		results[i] = res
	}
	return results
}

// file is a session file or database of a source.
type file struct {
	path, harness string
	r             adapters.UsageReader
	db            adapters.UsageStore
}

// list lists every source's files and stats them, each source beside
// the others, and returns them in path order, and what went wrong
// listing the sources, in their order (a source that cannot be listed
// gives what it found).
func (s *Scanner) list() ([]file, []fileStat, []string) {
	type listed struct {
		files []file
		infos []fileStat
		err   error
	}
	out := make([]listed, len(s.Sources))
	var wg sync.WaitGroup
	for i, src := range s.Sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &out[i]
			if src.Store != nil {
				var dbs []string
				dbs, l.err = src.Store.UsageDatabases(s.Getenv)
				for _, p := range dbs {
					l.files = append(l.files, file{p, src.Harness, nil, src.Store})
					l.infos = append(l.infos, storeStat(p))
				}
				return
			}
			var paths []string
			paths, l.err = src.Reader.UsageFiles(s.Getenv)
			l.files = make([]file, len(paths))
			for j, p := range paths {
				l.files[j] = file{p, src.Harness, src.Reader, nil}
			}
			l.infos = statAll(paths)
		}()
	}
	wg.Wait()
	n := 0
	var errs []string
	for i, src := range s.Sources {
		if err := out[i].err; err != nil {
			what := "session files"
			if src.Store != nil {
				what = "databases"
			}
			errs = append(errs, fmt.Sprintf("%s: listing its %s: %v", src.Harness, what, err))
		}
		n += len(out[i].files)
	}
	var files []file
	var infos []fileStat
	for i := range out {
		if len(out[i].files) == n {
			files, infos = out[i].files, out[i].infos // one source has every file
			break
		}
	}
	if files == nil && n > 0 {
		files, infos = make([]file, 0, n), make([]fileStat, 0, n)
		for i := range out {
			files = append(files, out[i].files...)
			infos = append(infos, out[i].infos...)
		}
	}
	if !sort.IsSorted(byPath{files, infos}) {
		sort.Stable(byPath{files, infos})
	}
	return files, infos, errs
}

// byPath sorts files and their stats together by path.
type byPath struct {
	files []file
	infos []fileStat
}

func (b byPath) Len() int           { return len(b.files) }
func (b byPath) Less(i, j int) bool { return b.files[i].path < b.files[j].path }
func (b byPath) Swap(i, j int) {
	b.files[i], b.files[j] = b.files[j], b.files[i]
	b.infos[i], b.infos[j] = b.infos[j], b.infos[i]
}

func (s *Scanner) warn(format string, args ...any) {
	if s.Warn != nil {
		fmt.Fprintf(s.Warn, "lifeloop usage: "+format+"\n", args...)
	}
}

// readBuffer is a reader's buffer: a longer line is gathered whole.
const readBuffer = 256 << 10

// reader reads files' new lines.
type reader struct {
	s       *Scanner
	loc     *time.Location
	buf     *bufio.Reader
	entries []adapters.UsageEntry
	// ahead: a large file is read ahead (readahead.go); set where a
	// processor would otherwise be idle.
	ahead bool
	// warnings gathers the warnings of the reading (written in path
	// order once all are done; nil: they go to the scanner's Warn).
	warnings *strings.Builder
	// ids receives the identities of the calls counted (nil: a reading
	// again, which hands none), out holds them until handOver.
	ids *identities
	out []pair
	// lost, when set, names the calls not to count (a reading again).
	lost *lostCalls
	// fileNo is the number of the file read, calls the number of calls
	// with an identity it counted so far.
	fileNo int
	calls  uint32
	// recent are the identities of the calls the file named last, by
	// their hash's low bits: the lines of one message repeat its call.
	recent [64]uint64
	// limit, when set, is the offset a file's reading stops at (a
	// reading again reads what the first one read, not what was added
	// since).
	limit int64
	// rates are the prices of the last call's model (a file's calls
	// are mostly of one).
	rates lastRates
	// day is the day of the last call, year, month and mday its date.
	day        string
	year, mday int
	month      time.Month
}

// dayOf is the day of t in the reader's zone ("unknown" for no time),
// the string of the call before when on the same day.
func (r *reader) dayOf(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	lt := t.In(r.loc)
	if y, m, d := lt.Date(); r.day == "" || y != r.year || m != r.month || d != r.mday {
		r.year, r.month, r.mday = y, m, d
		r.day = lt.Format("2006-01-02")
	}
	return r.day
}

// lastRates is what the pricer found for a provider and model.
type lastRates struct {
	provider, model string
	set, priced     bool
	rates           pricing.Rates
}

// keyHash is the FNV-1a hash of a call's identity.
func keyHash(key string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return h
}

// newReader is a reader handing identities to ids (nil: none).
func (s *Scanner) newReader(loc *time.Location, ids *identities, ahead bool) *reader {
	r := &reader{s: s, loc: loc, ids: ids, buf: bufio.NewReaderSize(nil, readBuffer), ahead: ahead, warnings: &strings.Builder{}}
	if ids != nil {
		r.out = make([]pair, 0, 1024)
	}
	return r
}

// begin starts the reading of file number i, its calls numbered from
// call.
func (r *reader) begin(i int, call uint32) {
	r.fileNo, r.calls = i, call
	clear(r.recent[:])
	r.warnings.Reset()
}

// handOver hands the identities gathered to the run's.
func (r *reader) handOver() {
	if r.ids != nil && len(r.out) > 0 {
		r.ids.hand(r.out)
		r.out = r.out[:0]
	}
}

// readResult is what a reader made of one file or database.
type readResult struct {
	// old is the record the reading continued (nil: none), start the
	// offset it began at; from the number of its first call that counts.
	old   *fileRecord
	start int64
	from  uint32
	rec   *fileRecord
	read  int64
	err   error
	// A database's reading that counted read from mark, its entries
	// (the first entries of a reading again count), continuing old's
	// record when continued.
	mark      int64
	entries   int
	continued bool
	warnings  string
}

// changed reports whether a file differs from its record.
func changed(rec *fileRecord, st fileStat) bool {
	return rec == nil || rec.Size != st.size || rec.ModTime != st.modTime
}

// fresh reports whether a changed file is read from its start: new, of
// another harness, or shorter than where its reading stopped.
func fresh(rec *fileRecord, harness string, st fileStat) bool {
	return rec == nil || rec.Harness != harness || st.size < rec.Offset
}

func (r *reader) warn(format string, args ...any) {
	if r.warnings != nil {
		fmt.Fprintf(r.warnings, "lifeloop usage: "+format+"\n", args...)
		return
	}
	r.s.warn(format, args...)
}

// file reads what changed of path since old (nil: never read) and
// returns its new record, leaving old as it was, and the bytes it read.
func (r *reader) file(old *fileRecord, path, harness string, ur adapters.UsageReader, st fileStat) (*fileRecord, int64, error) {
	var rec *fileRecord
	if fresh(old, harness, st) {
		rec = &fileRecord{Path: path, Harness: harness}
	} else {
		rec = copyRecord(old)
	}
	rec.Size, rec.ModTime = st.size, st.modTime
	f, err := openAt(path, rec.Offset, st.size)
	if err != nil {
		return nil, 0, err
	}
	f.limit = r.limit
	defer f.close()
	p := ur.NewUsageParser(path, rec.State)
	var read, bad, firstBad int64
	if lf, ok := p.(adapters.UsageLineFilter); ok && r.ahead && st.size-rec.Offset >= readAheadMin {
		read, bad, firstBad, err = r.fileAhead(rec, path, f, lf)
	} else {
		read, bad, firstBad, err = r.fileLines(rec, path, f, p)
	}
	if err != nil {
		return nil, read, err
	}
	rec.State = p.State()
	if bad > 0 {
		rec.BadLines += bad
		r.warn("%s: %d unreadable lines skipped (the first at offset %d)", path, bad, firstBad)
	}
	return rec, read, nil
}

// fileLines is file's loop over f's lines: each is parsed and its calls
// counted in rec; it returns the bytes read, the unreadable lines and the
// first one's offset.
func (r *reader) fileLines(rec *fileRecord, path string, f io.Reader, p adapters.UsageParser) (read, bad, firstBad int64, err error) {
	r.buf.Reset(f)
	for {
		line, err := r.buf.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gathered whole.
			more := append([]byte(nil), line...)
			line, err = r.buf.ReadSlice('\n')
			line = append(more, line...)
		}
		read += int64(len(line))
		if err != nil {
			if len(line) > 0 {
				r.unfinished(rec, path, len(line))
			}
			if err != io.EOF {
				return read, bad, firstBad, err
			}
			return read, bad, firstBad, nil
		}
		rec.Offset += int64(len(line))
		if len(line) <= 1 {
			continue
		}
		r.entries, err = p.Parse(r.entries[:0], line[:len(line)-1])
		if err != nil {
			if bad == 0 {
				firstBad = rec.Offset - int64(len(line))
			}
			bad++
		}
		for i := range r.entries {
			r.add(rec, &r.entries[i])
		}
	}
}

// unfinished reports a file's unfinished last line (n bytes at
// rec.Offset), once while it stays so.
func (r *reader) unfinished(rec *fileRecord, path string, n int) {
	if msg := fmt.Sprintf("its last line (%d bytes at offset %d) is unfinished: skipped until it ends", n, rec.Offset); rec.Reported != msg {
		rec.Reported = msg
		r.warn("%s: %s", path, msg)
	}
}

// fileReader reads a file from an offset with pread on a plain
// descriptor. An os.File costs a small file more than its reading: its
// opening offers the descriptor to the runtime's poller and sets its
// flags (three system calls), and a seek to the offset makes a fourth;
// at 10,000 small files that was a quarter of a cold run's CPU.
type fileReader struct {
	path      string
	fd        int
	off, size int64 // size: the file's size when listed
	// limit, when set, is the offset reading stops at.
	limit int64
	eof   bool
}

// openAt opens path to read from off; size is its size when listed.
func openAt(path string, off, size int64) (*fileReader, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return &fileReader{path: path, fd: fd, off: off, size: size}, nil
	}
}

// Read reads at the reader's offset. A read that fills less than p once
// the listed size is reached is the file's end: the read after it, which
// would find nothing, is not made (bytes appended since are read by the
// next run, as the file's size then differs from the recorded one).
func (f *fileReader) Read(p []byte) (int, error) {
	if f.eof {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if f.limit > 0 {
		if f.off >= f.limit {
			f.eof = true
			return 0, io.EOF
		}
		p = p[:min(int64(len(p)), f.limit-f.off)]
	}
	for {
		n, err := unix.Pread(f.fd, p, f.off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		if n == 0 {
			f.eof = true
			return 0, io.EOF
		}
		f.off += int64(n)
		if n < len(p) && f.off >= f.size {
			f.eof = true
		}
		return n, nil
	}
}

// close closes the descriptor (a read-only one: its close has nothing to report).
func (f *fileReader) close() { _ = unix.Close(f.fd) }

// add counts one call in rec, unless the file named its identity a few
// calls before or, reading again, it is one of the calls that lost.
func (r *reader) add(rec *fileRecord, e *adapters.UsageEntry) {
	if e.Key != "" {
		k := keyHash(e.Key)
		if slot := &r.recent[k%uint64(len(r.recent))]; *slot == k && k != 0 {
			return
		} else {
			*slot = k
		}
		n := r.calls
		r.calls++
		if r.lost != nil && r.lost.lost(r.fileNo, n) {
			return
		}
		if r.ids != nil {
			r.out = append(r.out, pair{k, place(r.fileNo, n)})
			if len(r.out) == cap(r.out) {
				r.handOver()
			}
		}
	}
	day := r.dayOf(e.At)
	b := rec.bucketOf(bucketKey{Day: day, Session: e.SessionID, Model: e.Model, Project: e.Project})
	b.Calls++
	b.Tokens.Add(e.Tokens)
	switch {
	case e.HasCost:
		b.Native += e.Cost
		b.NativeCalls++
	default:
		t := pricing.Tokens{Input: e.Tokens.Input, CacheRead: e.Tokens.CacheRead, CacheWrite: e.Tokens.CacheWrite, Output: e.Tokens.Output}
		if r.rates.provider != e.Provider || r.rates.model != e.Model || !r.rates.set {
			rates, ok := r.s.Pricer.Find(e.Provider, e.Model)
			r.rates = lastRates{provider: e.Provider, model: e.Model, set: true, rates: rates, priced: ok}
		}
		usd, ok := 0.0, false
		if r.rates.priced {
			usd, ok = r.rates.rates.Cost(e.At, t)
		}
		if ok {
			b.Estimated += usd
			b.EstimatedCalls++
		} else {
			b.UnknownCalls++
		}
	}
}

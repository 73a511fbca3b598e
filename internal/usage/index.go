package usage

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/atomicfile"
)

// indexVersion changes whenever the index's shape or meaning does: an
// index of another version is rebuilt.
const indexVersion = 4

// IndexFile is the index's name in <state>/usage/ (indexfile.go's
// format; a file without its magic reads as damaged and is rebuilt).
const IndexFile = "index.bin"

// index remembers, per session file, how far it was read and what it
// held, so a run reads only what changed since the last.
type index struct {
	Version int
	// Prices is the pricer's fingerprint and Zone the days' time zone:
	// costs and days are computed when a line is read, so an index made
	// with other prices or another zone is rebuilt.
	Prices, Zone string
	// files are the records by path (on disk in path order:
	// indexfile.go), nil while ordered holds them (byPath makes it).
	files map[string]*fileRecord
	// ordered are the records in path order, as loaded: a run with
	// nothing new matches them with the files it lists and never makes
	// the map. nil once files holds the records.
	ordered []*fileRecord
	// loaded counts the records loaded (their positions are 0 to it).
	loaded int
	// keys are the loaded index's identities, on disk (nil: none).
	keys *indexKeys
}

// byPath is the records by path, made from ordered on first use; the
// run changes the records through it.
func (x *index) byPath() map[string]*fileRecord {
	if x.files == nil {
		x.files = make(map[string]*fileRecord, len(x.ordered))
		for _, rec := range x.ordered {
			x.files[rec.Path] = rec
		}
		x.ordered = nil
	}
	return x.files
}

// records counts the records.
func (x *index) records() int {
	if x.files == nil {
		return len(x.ordered)
	}
	return len(x.files)
}

// match returns the record of each of files (in path order; nil for a
// file the index does not know) and how many records matched.
func (x *index) match(files []file) ([]*fileRecord, int) {
	olds := make([]*fileRecord, len(files))
	n := 0
	if x.files != nil {
		for i := range files {
			if i > 0 && files[i].path == files[i-1].path {
				olds[i] = olds[i-1]
			} else if olds[i] = x.files[files[i].path]; olds[i] != nil {
				n++
			}
		}
		return olds, n
	}
	j := 0
	for i := range files {
		p := files[i].path
		if i > 0 && p == files[i-1].path {
			olds[i] = olds[i-1]
			continue
		}
		for j < len(x.ordered) && x.ordered[j].Path < p {
			j++
		}
		if j < len(x.ordered) && x.ordered[j].Path == p {
			olds[i] = x.ordered[j]
			j++
			n++
		}
	}
	return olds, n
}

// fileRecord is what the index keeps of one file.
type fileRecord struct {
	Path    string
	Harness string
	// Size and ModTime (ns) are the file's when it was last read; Offset
	// is where reading resumes (the start of an unfinished last line).
	Size, ModTime, Offset int64
	// State is the harness parser's state at Offset.
	State []byte
	// Buckets are the file's sums by day, session, model and project,
	// in the order the file first names them.
	Buckets []bucket
	// loadedAt is the record's position in the index it was loaded
	// from plus one, 0 for a record made by this run (a file read from
	// its start): the identities the index holds for that position stay
	// the record's while it continues the loaded one. Not saved as such.
	loadedAt int32
	// Reported is the problem last reported for the file, so each is
	// reported once.
	Reported string
	BadLines int64
	// at finds a bucket by its key's hash once there are many (a
	// database's record holds every session's); not saved, and never
	// shared: a copy of the record starts without it.
	at map[uint64]int32
	// atN is the number of buckets at holds (of the hash they have first).
	atN int
}

// bucket is a file's sums of one bucketKey.
type bucket struct {
	Key  bucketKey
	Sums Sums
}

// bucketScan is the number of buckets looked through one by one; past
// it a record finds its buckets through a map.
const bucketScan = 128

// bucketOf returns rec's bucket of k, added when new.
func (rec *fileRecord) bucketOf(k bucketKey) *Sums {
	n := len(rec.Buckets)
	if n > 0 && rec.Buckets[n-1].Key == k {
		return &rec.Buckets[n-1].Sums
	}
	if n <= bucketScan {
		if i := rec.scanBuckets(k, n-1); i >= 0 {
			return &rec.Buckets[i].Sums
		}
	} else {
		if rec.at == nil || rec.atN != n {
			rec.at = make(map[uint64]int32, n)
			for i := range rec.Buckets {
				if h := rec.Buckets[i].Key.hash(); !hasKey(rec.at, h) {
					rec.at[h] = int32(i)
				}
			}
		}
		h := k.hash()
		if i, ok := rec.at[h]; ok {
			if rec.Buckets[i].Key == k {
				return &rec.Buckets[i].Sums
			}
			// Another key of the same hash: looked for one by one.
			if i := rec.scanBuckets(k, n-1); i >= 0 {
				return &rec.Buckets[i].Sums
			}
		} else {
			rec.at[h] = int32(n)
		}
		rec.atN = n + 1
	}
	rec.Buckets = append(rec.Buckets, bucket{Key: k})
	return &rec.Buckets[n].Sums
}

func hasKey(m map[uint64]int32, h uint64) bool {
	_, ok := m[h]
	return ok
}

// scanBuckets is the index of k's bucket among rec's buckets 0 to last, -1
// when none.
func (rec *fileRecord) scanBuckets(k bucketKey, last int) int {
	for i := last; i >= 0; i-- {
		if rec.Buckets[i].Key == k {
			return i
		}
	}
	return -1
}

// bucketKey is the finest grouping a file's calls are summed by.
type bucketKey struct {
	Day, Session, Model, Project string
}

// hash is the FNV-1a hash of k's fields, each ended by a 0 byte.
func (k bucketKey) hash() uint64 {
	h := uint64(14695981039346656037)
	for _, s := range [...]string{k.Day, k.Session, k.Model, k.Project} {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h *= 1099511628211 // the 0 byte
	}
	return h
}

// Sums are the tokens and costs of a group of calls.
type Sums struct {
	Calls  int64                `json:"calls"`
	Tokens adapters.UsageTokens `json:"-"`
	// Native is the cost the harness recorded of NativeCalls calls,
	// Estimated lifeloop's of EstimatedCalls; UnknownCalls had no price.
	Native         float64 `json:"-"`
	Estimated      float64 `json:"-"`
	NativeCalls    int64   `json:"native_calls"`
	EstimatedCalls int64   `json:"estimated_calls"`
	UnknownCalls   int64   `json:"unknown_calls"`
}

func (s *Sums) add(o *Sums) {
	s.Calls += o.Calls
	s.Tokens.Add(o.Tokens)
	s.Native += o.Native
	s.Estimated += o.Estimated
	s.NativeCalls += o.NativeCalls
	s.EstimatedCalls += o.EstimatedCalls
	s.UnknownCalls += o.UnknownCalls
}

// loadIndex reads the index at path; a missing, damaged or other
// version's index, or one made with other prices or zone, gives an empty
// one (rebuilt: every file is read again) and says why when it existed.
// Only the records are read: the identities stay on disk (x.keys) until
// a run that changed something merges them.
func loadIndex(path, prices, zone string) (idx *index, rebuilt string) {
	fresh := emptyIndex(prices, zone)
	f, err := os.Open(path)
	if err != nil {
		return fresh, ""
	}
	keys, head, err := readIndexFile(f)
	if err != nil {
		defer f.Close()
		if v, ok := indexFileVersion(f); ok && v != indexVersion {
			return fresh, "of another version"
		}
		return fresh, "damaged"
	}
	// The records' strings are slices of head, never written again.
	d, version, p, z, err := decodeIndexHead(unsafe.String(unsafe.SliceData(head), len(head)))
	switch {
	case err != nil:
		f.Close()
		return fresh, "damaged"
	case version != indexVersion:
		f.Close()
		return fresh, "of another version"
	case p != prices || z != zone:
		f.Close()
		return fresh, "made with other prices or time zone"
	}
	recs, err := d.records()
	if err != nil {
		f.Close()
		return fresh, "damaged"
	}
	x := &index{Version: indexVersion, Prices: prices, Zone: zone, ordered: recs, loaded: len(recs)}
	if keys.left > 0 {
		x.keys = keys
	} else {
		f.Close()
	}
	for i := 1; i < len(recs); i++ {
		if recs[i-1].Path >= recs[i].Path {
			x.byPath() // not written by save: found by path only
			break
		}
	}
	return x, ""
}

// emptyIndex is the index of a first run.
func emptyIndex(prices, zone string) *index {
	return &index{Version: indexVersion, Prices: prices, Zone: zone, files: map[string]*fileRecord{}}
}

// close closes the loaded index's file.
func (x *index) close() {
	if x.keys != nil {
		x.keys.f.Close()
	}
}

// save writes the index at path (0600, its folder 0700), with the
// identities given, (identity, file) in order: files are the run's list,
// a file without a record drops its identities.
func (x *index) save(path string, files []file, ids *pairSpill) error {
	if err := os.MkdirAll(filepath.Dir(path), atomicfile.DirPerm); err != nil {
		return err
	}
	recs := x.ordered
	if x.files != nil {
		recs = make([]*fileRecord, 0, len(x.files))
		for _, rec := range x.files {
			recs = append(recs, rec)
		}
		sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
	}
	// A file's record's position: both lists are in path order.
	posOf := make([]int32, len(files))
	for i, j := 0, 0; i < len(files); i++ {
		for j < len(recs) && recs[j].Path < files[i].path {
			j++
		}
		posOf[i] = -1
		if j < len(recs) && recs[j].Path == files[i].path {
			posOf[i] = int32(j)
		}
	}
	return atomicfile.ReplaceWith(path, func(w io.Writer) error {
		var m *merger
		if ids != nil {
			m = ids.merge()
		}
		var mergeErr error
		err := writeIndex(w, x, recs, func() (key uint64, pos int32, ok bool) {
			for m != nil {
				p, more := m.next()
				if !more {
					mergeErr, m = m.err(), nil
					break
				}
				if f := p.b; f < uint64(len(posOf)) && posOf[f] >= 0 {
					return p.a, posOf[f], true
				}
			}
			return 0, 0, false
		})
		return firstErr(err, mergeErr)
	})
}

package usage

import (
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/atomicfile"
)

// indexVersion changes whenever the index's shape or meaning does: an
// index of another version is rebuilt.
const indexVersion = 3

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
	// files are the records by path (on disk in path order: indexfile.go).
	files map[string]*fileRecord
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
	// Keys are the hashes of the call identities the file counted.
	Keys []uint64
	// Reported is the problem last reported for the file, so each is
	// reported once.
	Reported string
	BadLines int64
}

// bucket is a file's sums of one bucketKey.
type bucket struct {
	Key  bucketKey
	Sums Sums
}

// bucketOf returns rec's bucket of k, added when new.
func (rec *fileRecord) bucketOf(k bucketKey) *Sums {
	for i := len(rec.Buckets) - 1; i >= 0; i-- {
		if rec.Buckets[i].Key == k {
			return &rec.Buckets[i].Sums
		}
	}
	rec.Buckets = append(rec.Buckets, bucket{Key: k})
	return &rec.Buckets[len(rec.Buckets)-1].Sums
}

// bucketKey is the finest grouping a file's calls are summed by.
type bucketKey struct {
	Day, Session, Model, Project string
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
func loadIndex(path, prices, zone string) (idx *index, rebuilt string) {
	fresh := &index{Version: indexVersion, Prices: prices, Zone: zone, files: map[string]*fileRecord{}}
	b, err := os.ReadFile(path)
	if err != nil {
		return fresh, ""
	}
	if len(b) == 0 {
		return fresh, "damaged"
	}
	// The records' strings are slices of b, never written again.
	d, version, p, z, err := decodeIndexHead(unsafe.String(&b[0], len(b)))
	switch {
	case err != nil:
		return fresh, "damaged"
	case version != indexVersion:
		return fresh, "of another version"
	case p != prices || z != zone:
		return fresh, "made with other prices or time zone"
	}
	recs, err := d.records()
	if err != nil {
		return fresh, "damaged"
	}
	x := &index{Version: indexVersion, Prices: prices, Zone: zone, files: make(map[string]*fileRecord, len(recs))}
	for _, rec := range recs {
		x.files[rec.Path] = rec
	}
	return x, ""
}

// save writes the index at path (0600, its folder 0700).
func (x *index) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), atomicfile.DirPerm); err != nil {
		return err
	}
	recs := make([]*fileRecord, 0, len(x.files))
	for _, rec := range x.files {
		recs = append(recs, rec)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
	return atomicfile.Replace(path, encodeIndex(make([]byte, 0, encodedSize(x, recs)), x, recs))
}

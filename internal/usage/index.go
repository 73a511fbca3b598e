package usage

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/atomicfile"
)

// indexVersion changes whenever the index's shape or meaning does: an
// index of another version is rebuilt.
const indexVersion = 2

// IndexFile is the index's name in <state>/usage/.
const IndexFile = "index.gob"

// index remembers, per session file, how far it was read and what it
// held, so a run reads only what changed since the last.
type index struct {
	Version int
	// Prices is the pricer's fingerprint and Zone the days' time zone:
	// costs and days are computed when a line is read, so an index made
	// with other prices or another zone is rebuilt.
	Prices, Zone string
	// Files are the records by path; on disk a slice (List), which
	// decodes several times faster than a map.
	files map[string]*fileRecord
	List  []*fileRecord
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
	var x index
	switch {
	case gob.NewDecoder(bytes.NewReader(b)).Decode(&x) != nil:
		return fresh, "damaged"
	case x.Version != indexVersion:
		return fresh, "of another version"
	case x.Prices != prices || x.Zone != zone:
		return fresh, "made with other prices or time zone"
	}
	x.files = make(map[string]*fileRecord, len(x.List))
	for _, rec := range x.List {
		x.files[rec.Path] = rec
	}
	x.List = nil
	return &x, ""
}

// save writes the index at path (0600, its folder 0700).
func (x *index) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), atomicfile.DirPerm); err != nil {
		return err
	}
	x.List = x.List[:0]
	for _, rec := range x.files {
		x.List = append(x.List, rec)
	}
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(x)
	x.List = nil
	if err != nil {
		return err
	}
	return atomicfile.Replace(path, b.Bytes())
}

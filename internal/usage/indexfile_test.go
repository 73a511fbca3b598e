package usage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// keyList gives keys to writeIndex, in order.
func keyList(keys []pair) func() (uint64, int32, bool) {
	return func() (uint64, int32, bool) {
		if len(keys) == 0 {
			return 0, 0, false
		}
		k := keys[0]
		keys = keys[1:]
		return k.a, int32(k.b), true
	}
}

// openIndex reads an index file's head and opens its identities
// (closed with the test).
func openIndex(t *testing.T, path string) (*indexKeys, []byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ik, head, err := readIndexFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return ik, head
}

// writtenIndex writes the index to a file and opens it (openIndex).
func writtenIndex(t *testing.T, x *index, recs []*fileRecord, keys []pair) (*indexKeys, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := writeIndex(&buf, x, recs, keyList(keys)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), IndexFile)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return openIndex(t, path)
}

// allKeys reads an index's identities as the merge reads them, their
// tag taken off.
func allKeys(t *testing.T, ik *indexKeys) []pair {
	t.Helper()
	var keys []pair
	for p, ok := ik.next(); ok; p, ok = ik.next() {
		keys = append(keys, pair{p.a, p.b &^ indexTag})
	}
	if err := ik.err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// readBack writes the index to a file and reads it back: the records,
// the identities, prices and zone.
func readBack(t *testing.T, x *index, recs []*fileRecord, keys []pair) ([]*fileRecord, []pair, string, string) {
	t.Helper()
	ik, head := writtenIndex(t, x, recs, keys)
	d, _, prices, zone, err := decodeIndexHead(string(head))
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.records()
	if err != nil {
		t.Fatal(err)
	}
	return got, allKeys(t, ik), prices, zone
}

// The index of every sample harness's files decodes to the same records
// and identities.
func TestIndexWrittenDecodes(t *testing.T) {
	s := scanner(t, home(t), nil, nil)
	sc, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	var recs []*fileRecord
	for _, r := range sc.idx.byPath() {
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
	// The identities the run saved, read from its index.
	ik, _ := openIndex(t, filepath.Join(s.StateDir, "usage", IndexFile))
	keys := allKeys(t, ik)
	if len(recs) < 4 || len(keys) == 0 {
		t.Fatalf("%d records with %d identities: the samples give too little to test", len(recs), len(keys))
	}
	got, gotKeys, _, _ := readBack(t, sc.idx, recs, keys)
	if len(got) != len(recs) || len(gotKeys) != len(keys) {
		t.Fatalf("decoded %d records of %d, %d identities of %d", len(got), len(recs), len(gotKeys), len(keys))
	}
	for i := range got {
		if got[i].Path != recs[i].Path || len(got[i].Buckets) != len(recs[i].Buckets) || got[i].loadedAt != int32(i)+1 {
			t.Fatalf("record %d decoded as %+v, was %+v", i, got[i], recs[i])
		}
	}
	for i := range keys {
		if gotKeys[i] != keys[i] {
			t.Fatalf("identity %d decoded as %v, was %v", i, gotKeys[i], keys[i])
		}
	}
}

// An index larger than a chunk (20,000 identities, 201 records) is
// written in several and decodes to the same records and identities.
func TestIndexWrittenInChunks(t *testing.T) {
	x := &index{Prices: "p", Zone: "UTC"}
	var recs []*fileRecord
	var keys []pair
	for i := range 201 {
		r := &fileRecord{Path: fmt.Sprintf("/h/%04d.jsonl", i), Harness: "claude", Size: int64(i), Offset: int64(i)}
		r.Buckets = []bucket{{Key: bucketKey{Day: "2026-11-01", Session: "s", Model: "m", Project: "p"}, Sums: Sums{Calls: int64(i)}}}
		recs = append(recs, r)
	}
	for k := range 20000 {
		keys = append(keys, pair{uint64(k) * 0x9e3779b97f4a7c1, uint64(k % 201)})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].a < keys[j].a })
	got, gotKeys, prices, zone := readBack(t, x, recs, keys)
	if prices != "p" || zone != "UTC" || len(got) != len(recs) || len(gotKeys) != len(keys) {
		t.Fatalf("head %q %q, %d records, %d identities", prices, zone, len(got), len(gotKeys))
	}
	for i := range got {
		if got[i].Path != recs[i].Path || got[i].Buckets[0].Sums != recs[i].Buckets[0].Sums {
			t.Fatalf("record %d decoded differently", i)
		}
	}
	for i := range keys {
		if gotKeys[i] != keys[i] {
			t.Fatalf("identity %d decoded as %v, was %v", i, gotKeys[i], keys[i])
		}
	}
}

// Identities out of order end the index's identities as damaged.
func TestIndexIdentitiesOutOfOrderAreDamaged(t *testing.T) {
	ik, _ := writtenIndex(t, &index{}, nil, []pair{{5, 0}, {3, 0}})
	n := 0
	for _, ok := ik.next(); ok; _, ok = ik.next() {
		n++
	}
	if n != 1 || !errors.Is(ik.err(), errIndexDamaged) {
		t.Fatalf("%d identities read, error %v", n, ik.err())
	}
}

// A write that fails fails the index's writing.
func TestIndexWriteError(t *testing.T) {
	keys := make([]pair, 20000)
	if err := writeIndex(failingWriter{}, &index{}, []*fileRecord{{Path: "/h/a.jsonl"}}, keyList(keys)); err == nil {
		t.Fatal("a failing write was not reported")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

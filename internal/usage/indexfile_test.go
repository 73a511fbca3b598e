package usage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
)

// The index of every sample harness's files, written a chunk at a time,
// decodes to the same records.
func TestIndexWrittenDecodes(t *testing.T) {
	sc, err := scanner(t, home(t), nil, nil).Run()
	if err != nil {
		t.Fatal(err)
	}
	var recs []*fileRecord
	keys := 0
	for _, r := range sc.idx.byPath() {
		recs = append(recs, r)
		keys += len(r.Keys)
	}
	if len(recs) < 4 || keys == 0 {
		t.Fatalf("%d records with %d keys: the samples give too little to test", len(recs), keys)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
	var buf bytes.Buffer
	if err := writeIndex(&buf, sc.idx, recs); err != nil {
		t.Fatal(err)
	}
	d, _, _, _, err := decodeIndexHead(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.records()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("decoded %d records of %d", len(got), len(recs))
	}
	for i := range got {
		if got[i].Path != recs[i].Path || len(got[i].Keys) != len(recs[i].Keys) || len(got[i].Buckets) != len(recs[i].Buckets) {
			t.Fatalf("record %d decoded as %+v, was %+v", i, got[i], recs[i])
		}
	}
}

// An index larger than a chunk (a file of 20,000 calls, 200 files of
// one) is written in several and decodes to the same records.
func TestIndexWrittenInChunks(t *testing.T) {
	x := &index{Prices: "p", Zone: "UTC"}
	var recs []*fileRecord
	for i := range 201 {
		r := &fileRecord{Path: fmt.Sprintf("/h/%04d.jsonl", i), Harness: "claude", Size: int64(i), Offset: int64(i)}
		n := 1
		if i == 100 {
			n = 20000
		}
		for k := range n {
			r.Keys = append(r.Keys, uint64(i)<<32|uint64(k)+2)
		}
		r.Buckets = []bucket{{Key: bucketKey{Day: "2026-11-01", Session: "s", Model: "m", Project: "p"}, Sums: Sums{Calls: int64(n)}}}
		recs = append(recs, r)
	}
	var buf bytes.Buffer
	if err := writeIndex(&buf, x, recs); err != nil {
		t.Fatal(err)
	}
	if buf.Len() < 2*encodeChunk {
		t.Fatalf("the index takes %d bytes: too few to cross chunks", buf.Len())
	}
	d, _, prices, zone, err := decodeIndexHead(buf.String())
	if err != nil || prices != "p" || zone != "UTC" {
		t.Fatalf("head %q %q %v", prices, zone, err)
	}
	got, err := d.records()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("decoded %d records of %d", len(got), len(recs))
	}
	for i := range got {
		if got[i].Path != recs[i].Path || !slices.Equal(got[i].Keys, recs[i].Keys) || got[i].Buckets[0].Sums != recs[i].Buckets[0].Sums {
			t.Fatalf("record %d decoded differently", i)
		}
	}
}

// A write that fails fails the index's writing.
func TestIndexWriteError(t *testing.T) {
	recs := []*fileRecord{{Path: "/h/a.jsonl", Keys: make([]uint64, 20000)}}
	if err := writeIndex(failingWriter{}, &index{}, recs); err == nil {
		t.Fatal("a failing write was not reported")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

package usage

import (
	"sort"
	"testing"
)

// The index of every sample harness's files fits the size encodedSize
// foresees, so it is encoded into one buffer, and decodes to the same
// records.
func TestIndexFitsItsForeseenSize(t *testing.T) {
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
	size := encodedSize(sc.idx, recs)
	b := encodeIndex(make([]byte, 0, size), sc.idx, recs)
	if len(b) > size {
		t.Fatalf("the index takes %d bytes, %d foreseen", len(b), size)
	}
	d, _, _, _, err := decodeIndexHead(string(b))
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

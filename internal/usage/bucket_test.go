package usage

import (
	"fmt"
	"slices"
	"testing"
)

// TestBucketOfManyBuckets: past bucketScan buckets a record finds them
// through its map, with the sums and the first-named order of a scan one
// by one, and a copy of the record (as a reading makes) adds to itself
// only.
func TestBucketOfManyBuckets(t *testing.T) {
	key := func(i int) bucketKey {
		return bucketKey{Day: fmt.Sprintf("2026-11-%02d", 1+i%3), Session: fmt.Sprintf("s%d", i%97), Model: "m", Project: "p"}
	}
	rec := &fileRecord{}
	want := map[bucketKey]int64{}
	var order []bucketKey
	for i := range 2000 {
		k := key(i * 7 % 300)
		if _, ok := want[k]; !ok {
			order = append(order, k)
		}
		want[k]++
		rec.bucketOf(k).Calls++
	}
	check := func(rec *fileRecord, want map[bucketKey]int64, order []bucketKey) {
		t.Helper()
		var got []bucketKey
		for _, b := range rec.Buckets {
			got = append(got, b.Key)
			if b.Sums.Calls != want[b.Key] {
				t.Fatalf("bucket %v: %d calls, want %d", b.Key, b.Sums.Calls, want[b.Key])
			}
		}
		if !slices.Equal(got, order) {
			t.Fatalf("buckets %d in order %v, want %d", len(got), got[:min(5, len(got))], len(order))
		}
	}
	if len(order) <= bucketScan {
		t.Fatalf("only %d buckets: the map is not used", len(order))
	}
	check(rec, want, order)

	// A copy adds a bucket and a call; the record stays as it was.
	c := *rec
	c.at = nil
	c.Buckets = slices.Clone(rec.Buckets)
	extra := bucketKey{Day: "2026-12-01", Session: "new"}
	c.bucketOf(extra).Calls++
	c.bucketOf(order[0]).Calls++
	check(rec, want, order)
	want2 := map[bucketKey]int64{extra: 1}
	for k, v := range want {
		want2[k] = v
	}
	want2[order[0]]++
	check(&c, want2, append(slices.Clone(order), extra))
	// The record goes on from its own buckets after the copy's.
	rec.bucketOf(order[1]).Calls++
	want[order[1]]++
	check(rec, want, order)

	// Two keys of one hash (forced: the map sends order[3]'s hash to
	// order[2]'s bucket): each still finds its own.
	rec.at[order[3].hash()] = rec.at[order[2].hash()]
	rec.bucketOf(order[3]).Calls++
	rec.bucketOf(order[2]).Calls++
	want[order[3]]++
	want[order[2]]++
	check(rec, want, order)
}

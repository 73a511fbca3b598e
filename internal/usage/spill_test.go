package usage

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortPairs sorts as a plain sort does, pairs of equal a included, and
// a spill merges its runs, spilled or not, into the same order, never
// keeping maxRuns runs (merged into one as they reach it).
func TestPairsSortAndMergeInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 255, 256, 5000, 100000} {
		ps := make([]pair, n)
		for i := range ps {
			ps[i] = pair{rng.Uint64(), uint64(i)}
			if i%7 == 0 && i > 0 {
				ps[i].a = ps[i-1].a // equal a's
			}
			if i%11 == 0 {
				ps[i].a >>= 50 // a crowded pile
			}
		}
		want := slices.Clone(ps)
		slices.SortStableFunc(want, cmpPairs)
		got := slices.Clone(ps)
		sortPairs(got)
		for i := range got {
			if got[i].a != want[i].a {
				t.Fatalf("%d pairs: %d is %x, want %x", n, i, got[i].a, want[i].a)
			}
		}
		slices.SortFunc(got, func(x, y pair) int { return int(x.b) - int(y.b) })
		if !slices.Equal(got, ps) {
			t.Fatalf("%d pairs: the sort lost or changed pairs", n)
		}
		for _, limit := range []int{3, 1000, 1 << 20} {
			s := newPairSpill(limit, false)
			s.addAll(ps[:n/2])
			for _, p := range ps[n/2:] {
				s.add(p)
			}
			m := s.merge(&memRun{ps: []pair{{0, 1}, {1 << 63, 2}}})
			var out []pair
			for p, ok := m.next(); ok; p, ok = m.next() {
				out = append(out, p)
			}
			if err := m.err(); err != nil {
				t.Fatal(err)
			}
			s.close()
			if len(out) != n+2 || !slices.IsSortedFunc(out, cmpPairs) {
				t.Fatalf("%d pairs, limit %d: merged %d, sorted %v", n, limit, len(out), slices.IsSortedFunc(out, cmpPairs))
			}
			if n > limit && len(s.runs) < 2 || len(s.runs) >= maxRuns {
				t.Fatalf("%d pairs, limit %d: %d runs", n, limit, len(s.runs))
			}
		}
	}
}

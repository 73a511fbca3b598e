package usage

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestKeySetAgreesWithAMap: adds, removes and lookups of many keys (0
// and 1, the slot marks, among them) answer as a map's.
func TestKeySetAgreesWithAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s keySet
	m := map[uint64]bool{}
	for i := range 200000 {
		k := r.Uint64N(50000)
		if i%7 == 0 {
			k = uint64(i % 2) // 0 and 1
		}
		switch r.IntN(3) {
		case 0, 1:
			if got, want := s.add(k), !m[k]; got != want {
				t.Fatalf("add(%d) = %v, want %v", k, got, want)
			}
			m[k] = true
		case 2:
			s.remove(k)
			delete(m, k)
		}
		if q := r.Uint64N(50000); s.has(q) != m[q] {
			t.Fatalf("has(%d) = %v, want %v", q, s.has(q), m[q])
		}
	}
	if s.live+bits.OnesCount8(s.marks) != len(m) {
		t.Fatalf("holds %d keys, want %d", s.live, len(m))
	}
	s.reset()
	for k := range m {
		if s.has(k) {
			t.Fatalf("has(%d) after reset", k)
		}
	}
}

// A set reserved for n keys holds them in the slots it was given, at
// most three quarters full (11 bytes a key, not 16 to 32), and finds
// each.
func TestKeySetReserveHoldsWithoutGrowing(t *testing.T) {
	const n = 100000
	var s keySet
	s.reserve(n)
	slots := len(s.slots)
	if slots*3 < n*4 || slots > n*4/3+64 {
		t.Fatalf("reserved %d slots for %d keys", slots, n)
	}
	for k := uint64(2); k < n+2; k++ {
		if !s.add(k * 0x9e3779b97f4a7c15) {
			t.Fatalf("key %d was already there", k)
		}
	}
	if len(s.slots) != slots {
		t.Fatalf("the set grew from %d to %d slots", slots, len(s.slots))
	}
	for k := uint64(2); k < n+2; k++ {
		if !s.has(k * 0x9e3779b97f4a7c15) {
			t.Fatalf("key %d not found", k)
		}
	}
}

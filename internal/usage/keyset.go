package usage

import "math/bits"

// keySet is a set of call identities (64-bit hashes), open-addressed
// with linear probing: 8 bytes a slot at most three quarters full, about
// half of what a Go map of the same keys holds. The slots are any number
// (a key's first slot is its hash scaled to them), so a set reserved for
// all of a run's identities takes 11 bytes a key, not the 16 to 32 of a
// power of two at most half full.
type keySet struct {
	slots []uint64 // 0 empty, 1 deleted, else the key
	live  int      // keys held
	used  int      // slots not empty (keys and deleted)
	// marks holds the keys 0 and 1 (bits 0 and 1), which mark slots.
	marks uint8
}

// has reports whether k is in s.
func (s *keySet) has(k uint64) bool {
	if k < 2 {
		return s.marks&(1<<k) != 0
	}
	if len(s.slots) == 0 {
		return false
	}
	for i := s.home(k); ; i = s.next(i) {
		switch s.slots[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

// home is k's first slot.
func (s *keySet) home(k uint64) int {
	hi, _ := bits.Mul64(k*0x9e3779b97f4a7c15, uint64(len(s.slots)))
	return int(hi)
}

// next is the slot after i.
func (s *keySet) next(i int) int {
	if i++; i == len(s.slots) {
		return 0
	}
	return i
}

// add puts k in s and reports whether it was new.
func (s *keySet) add(k uint64) bool {
	if k < 2 {
		had := s.marks&(1<<k) != 0
		s.marks |= 1 << k
		return !had
	}
	if (s.used+1)*4 > len(s.slots)*3 {
		s.grow()
	}
	free := -1
	for i := s.home(k); ; i = s.next(i) {
		switch s.slots[i] {
		case k:
			return false
		case 1:
			if free < 0 {
				free = i
			}
			continue
		case 0:
			if free < 0 {
				free = i
				s.used++
			}
			s.slots[free] = k
			s.live++
			return true
		}
	}
}

// remove takes k out of s.
func (s *keySet) remove(k uint64) {
	if k < 2 {
		s.marks &^= 1 << k
		return
	}
	if len(s.slots) == 0 {
		return
	}
	for i := s.home(k); ; i = s.next(i) {
		switch s.slots[i] {
		case k:
			s.slots[i] = 1
			s.live--
			return
		case 0:
			return
		}
	}
}

// reserve makes an empty s hold n keys without growing: slots at most
// three quarters full once they are in.
func (s *keySet) reserve(n int) {
	if s.used == 0 {
		s.live = 0
		s.rehash(n*4/3 + 1)
	}
}

// reset empties s, keeping its slots.
func (s *keySet) reset() {
	clear(s.slots)
	s.live, s.used, s.marks = 0, 0, 0
}

// grow rehashes s into slots at most half full (deleted slots dropped).
func (s *keySet) grow() {
	s.rehash(2 * (s.live + 1))
}

// rehash moves s's keys into n slots (64 at least), deleted slots
// dropped.
func (s *keySet) rehash(n int) {
	n = max(n, 64)
	old := s.slots
	s.slots, s.live, s.used = make([]uint64, n), 0, 0
	for _, k := range old {
		if k >= 2 {
			s.add(k)
		}
	}
}

package usage

// keySet is a set of call identities (64-bit hashes), open-addressed
// with linear probing: 8 bytes a slot at most three quarters full, about
// half of what a Go map of the same keys holds, so a corpus of a million
// calls stays within the memory a run may use.
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
	mask := uint64(len(s.slots) - 1)
	for i := k * 0x9e3779b97f4a7c15 >> 7 & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
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
	mask := uint64(len(s.slots) - 1)
	free := -1
	for i := k * 0x9e3779b97f4a7c15 >> 7 & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return false
		case 1:
			if free < 0 {
				free = int(i)
			}
			continue
		case 0:
			if free < 0 {
				free = int(i)
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
	mask := uint64(len(s.slots) - 1)
	for i := k * 0x9e3779b97f4a7c15 >> 7 & mask; ; i = (i + 1) & mask {
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

// reserve makes an empty s hold n keys without growing.
func (s *keySet) reserve(n int) {
	if s.used == 0 {
		s.live = 0
		s.grow0(n)
	}
}

// reset empties s, keeping its slots.
func (s *keySet) reset() {
	clear(s.slots)
	s.live, s.used, s.marks = 0, 0, 0
}

// grow rehashes s into slots at most half full (deleted slots dropped).
func (s *keySet) grow() {
	s.grow0(s.live + 1)
}

// grow0 rehashes s into the fewest slots (64 at least) that hold keys
// at most half full, deleted slots dropped.
func (s *keySet) grow0(keys int) {
	n := 64
	for n < keys*2 {
		n *= 2
	}
	old := s.slots
	s.slots, s.live, s.used = make([]uint64, n), 0, 0
	for _, k := range old {
		if k >= 2 {
			s.add(k)
		}
	}
}

package autorenew

// Lease bounds the renewals policy clients run at once on the machine
// (all sessions of one state folder): Max slots, each a lock file in
// Dir (the state folder's autorenew/ folder, 0700; files 0600) held
// with an exclusive advisory lock for the length of one renewal. A
// client that dies releases its slot with its descriptors.
type Lease struct {
	Dir string
	Max int
}

// Slot is one held slot; Release frees it.
type Slot struct{ release func() }

// Release frees the slot; it is idempotent.
func (s *Slot) Release() {
	if s != nil && s.release != nil {
		s.release()
		s.release = nil
	}
}

// TryAcquire takes a free slot without waiting; ok is false when all Max
// are held.
func (l Lease) TryAcquire() (s *Slot, ok bool, err error) { panic("autorenew: not built yet") }

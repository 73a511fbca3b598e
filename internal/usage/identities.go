package usage

import "sync"

// A call with an identity is counted once across every file, where it
// was first read: a harness may copy a session's calls into a new file
// when it resumes the session. Which occurrence is first is decided once
// every changed file has been read, not while reading, so that the
// identities never need to be in memory all at once:
//
//   - every reading counts each call, but one its own file named a few
//     calls before (reader.recent: the lines of one message), and hands
//     over the call's identity and its place, (file, call), as a pair;
//   - the pairs, spilled to disk in sorted runs past a bound, are merged
//     with the index's identities, which are kept on disk in order
//     (indexfile.go), never loaded; for each identity the index's
//     occurrence wins, else the first place;
//   - a file with a call that lost is read again (its reading's part
//     only) without the calls that lost.
//
// The identities of a file gone, or read again from its start, are
// dropped first. A run with no repeated call reads each file once; the
// file of a session resumed into a new one is read twice.

// spillLimit is how many pairs a pairSpill holds in memory (2 MiB; a
// variable for the tests).
var spillLimit = 128 << 10

// place is a call's place: the file's number in the run's list in the
// high half, the call's number in the file's reading (counting the calls
// with an identity) in the low half. Places order as the calls were
// read, one file after the other in path order.
func place(file int, call uint32) uint64 { return uint64(file)<<32 | uint64(call) }

// indexTag marks a pair's b as the position of an index record whose
// identity the pair is.
const indexTag = 1 << 63

// identities gathers a run's pairs.
type identities struct {
	mu    sync.Mutex
	pairs *pairSpill
	// from is, per file, the number of its first call that counts: the
	// calls before it were read by a reading given up (a database read
	// again from its start); given up whole, math.MaxUint32.
	from []uint32
}

func newIdentities(files int) *identities {
	return &identities{pairs: newPairSpill(spillLimit, false), from: make([]uint32, files)}
}

// hand adds a reading's pairs.
func (ids *identities) hand(ps []pair) {
	ids.mu.Lock()
	ids.pairs.addAll(ps)
	ids.mu.Unlock()
}

// giveUp drops the calls of file numbered below call (all of them:
// math.MaxUint32).
func (ids *identities) giveUp(file int, call uint32) {
	ids.mu.Lock()
	ids.from[file] = call
	ids.mu.Unlock()
}

func (ids *identities) close() { ids.pairs.close() }

// resolve merges the run's pairs with the index's identities (old, nil
// for none; b: indexTag and the record's position), of which only
// those of the records kept are counted (kept: a loaded record's
// position to the number of the file it stays the record of, -1 when
// dropped). It returns the identities to save, (identity, file), in
// order, and the places of the calls that lost, in any order.
func (ids *identities) resolve(old pairSource, kept []int32) (winners, lost *pairSpill, err error) {
	winners = newPairSpill(spillChunk, true)
	lost = newPairSpill(spillLimit, false)
	var more []pairSource
	if old != nil {
		more = append(more, old)
	}
	m := ids.pairs.merge(more...)
	var (
		key      uint64
		any      bool  // a pair of key was seen
		inIndex  int32 // the file whose record holds key, -1 none
		first    uint64
		hasFirst bool
	)
	end := func() {
		switch {
		case inIndex >= 0:
			winners.add(pair{key, uint64(inIndex)})
			if hasFirst {
				lost.add(pair{first, 0})
			}
		case hasFirst:
			winners.add(pair{key, first >> 32})
		}
	}
	for {
		p, ok := m.next()
		if !ok {
			break
		}
		if !any || p.a != key {
			if any {
				end()
			}
			key, any, inIndex, hasFirst = p.a, true, -1, false
		}
		if p.b&indexTag != 0 {
			if pos := p.b &^ indexTag; pos < uint64(len(kept)) && kept[pos] >= 0 && inIndex < 0 {
				inIndex = kept[pos]
			}
			continue
		}
		if file := p.b >> 32; uint32(p.b) < ids.from[file] {
			continue
		}
		switch {
		case !hasFirst:
			first, hasFirst = p.b, true
		case p.b < first:
			lost.add(pair{first, 0})
			first = p.b
		default:
			lost.add(pair{p.b, 0})
		}
	}
	if any {
		end()
	}
	if err := m.err(); err != nil {
		return winners, lost, err
	}
	return winners, lost, firstErr(ids.pairs.err, winners.err, lost.err)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// lostCalls gives the calls that lost, file by file, in place order.
type lostCalls struct {
	m    *merger
	head pair
	ok   bool
}

func newLostCalls(m *merger) *lostCalls {
	c := &lostCalls{m: m}
	c.head, c.ok = m.next()
	return c
}

// nextFile is the number of the next file with calls that lost.
func (c *lostCalls) nextFile() (int, bool) {
	if !c.ok {
		return 0, false
	}
	return int(c.head.a >> 32), true
}

// lost reports whether the call of file numbered call lost; it is asked
// of each of the file's calls in order.
func (c *lostCalls) lost(file int, call uint32) bool {
	for c.ok && c.head.a < place(file, call) {
		c.head, c.ok = c.m.next()
	}
	return c.ok && c.head.a == place(file, call)
}

// skipFile passes over what is left of file's lost calls.
func (c *lostCalls) skipFile(file int) {
	for c.ok && c.head.a>>32 == uint64(file) {
		c.head, c.ok = c.m.next()
	}
}

// Package ids mints lifeloop's prefixed identifiers: a short prefix, an
// underscore and a ULID, e.g. "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F".
//
// The prefixes in use are listed in DESIGN.md §3: ses_ (lifeloop session),
// lfr_ (receipt), inv_ (invocation), evt_ (event).
package ids

import (
	"crypto/rand"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Well-known prefixes.
const (
	PrefixSession    = "ses"
	PrefixReceipt    = "lfr"
	PrefixInvocation = "inv"
	PrefixEvent      = "evt"
)

// Source mints identifiers. Components take a Source so tests can inject a
// deterministic one.
type Source interface {
	// New returns prefix + "_" + a fresh, unique, time-ordered suffix.
	New(prefix string) string
}

// SourceFunc adapts a function to Source.
type SourceFunc func(prefix string) string

// New calls f.
func (f SourceFunc) New(prefix string) string { return f(prefix) }

// ULIDSource mints ULIDs from a clock and monotonic entropy. It is safe
// for concurrent use. Within one millisecond successive ids are strictly
// increasing, so ids sort in the order they were minted by one Source.
type ULIDSource struct {
	mu      sync.Mutex
	now     func() time.Time
	entropy *ulid.MonotonicEntropy
}

// NewULIDSource returns a Source reading time from now (time.Now when nil)
// and randomness from entropy (crypto/rand when nil).
func NewULIDSource(now func() time.Time, entropy io.Reader) *ULIDSource {
	if now == nil {
		now = time.Now
	}
	if entropy == nil {
		entropy = rand.Reader
	}
	return &ULIDSource{now: now, entropy: ulid.Monotonic(entropy, 0)}
}

// New implements Source.
func (s *ULIDSource) New(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := ulid.Timestamp(s.now())
	id, err := ulid.New(ms, s.entropy)
	if err != nil {
		// Monotonic entropy overflows only after 2^80 ids in one
		// millisecond, or when the entropy reader fails; fall back to a
		// fresh random id in the next millisecond rather than failing.
		id = ulid.MustNew(ms+1, rand.Reader)
	}
	return prefix + "_" + id.String()
}

// Sequential is a deterministic Source for tests: it returns
// prefix_<26-char zero-padded counter>, e.g. "lfr_00000000000000000000000001".
// It is safe for concurrent use.
type Sequential struct {
	mu sync.Mutex
	n  uint64
}

// New implements Source.
func (s *Sequential) New(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("%s_%026d", prefix, s.n)
}

// Split returns the prefix and suffix of id, and false when id has no
// underscore separator.
func Split(id string) (prefix, suffix string, ok bool) {
	for i := 0; i < len(id); i++ {
		if id[i] == '_' {
			return id[:i], id[i+1:], i > 0 && i < len(id)-1
		}
	}
	return "", "", false
}

// Time returns the creation time encoded in a ULID-suffixed id, and false
// when the suffix is not a ULID.
func Time(id string) (time.Time, bool) {
	_, suffix, ok := Split(id)
	if !ok {
		return time.Time{}, false
	}
	u, err := ulid.ParseStrict(suffix)
	if err != nil {
		return time.Time{}, false
	}
	return ulid.Time(u.Time()), true
}

package renewal

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)} }

// payload builds a valid utf8 payload with the given body.
func payload(id, body string, placements ...contract.PlacementClass) contract.PayloadEnvelope {
	if len(placements) == 0 {
		placements = []contract.PlacementClass{contract.PlacementDeveloperEquivalentFrame}
	}
	var aps []contract.AcceptablePlacement
	for _, p := range placements {
		aps = append(aps, contract.AcceptablePlacement{Placement: p, Requirement: contract.RequirementRequired})
	}
	p := testutil.Payload(id, body, aps...)
	p.PayloadKind = "continuation"
	return p
}

func newStore(t *testing.T, clock *fakeClock) *Store {
	t.Helper()
	return &Store{Dir: filepath.Join(t.TempDir(), "continuation"), Now: clock.Now}
}

func TestStorePutGetDropList(t *testing.T) {
	clock := newClock()
	s := newStore(t, clock)
	const secret = "SECRET-BODY-4411"
	p := payload("pay_1", secret)
	e, err := s.Put(p)
	if err != nil {
		t.Fatal(err)
	}
	if e.PayloadID != "pay_1" || e.ByteSize != uint64(len(secret)) || e.Digest != *p.ContentDigest || !e.Expires.Equal(clock.t.Add(DefaultTTL)) {
		t.Errorf("entry %+v", e)
	}
	fi, err := os.Stat(s.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("store folder mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir, "*"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("payload file mode %v, want 0600", fi.Mode().Perm())
	}
	if strings.Contains(files[0], "pay_1") {
		t.Errorf("file name %s carries the payload id", files[0])
	}
	// Putting the same payload again is a no-op.
	if _, err := s.Put(p); err != nil {
		t.Errorf("same payload again: %v", err)
	}
	got, err := s.Get("pay_1")
	if err != nil || got.Body == nil || *got.Body != secret {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].PayloadID != "pay_1" || list[0].Expired {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := s.Drop("pay_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("pay_1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Drop: %v", err)
	}
	if err := s.Drop("pay_1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Drop twice: %v", err)
	}
	// Ids with path characters are safe.
	odd := payload("../../escape", "x")
	if _, err := s.Put(odd); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get("../../escape"); err != nil || *got.Body != "x" {
		t.Errorf("odd id: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Dir), "escape")); err == nil {
		t.Error("an id escaped the store folder")
	}
}

func TestStoreRejects(t *testing.T) {
	clock := newClock()
	past := clock.t.Add(-time.Second).Unix()
	big := strings.Repeat("x", 1025)
	badDigest := payload("pay_d", "abc")
	badDigest.ContentDigest = contract.Ptr(contract.Digest([]byte("abd")))
	badSize := payload("pay_s", "abc")
	badSize.ByteSize = 4
	expired := payload("pay_e", "abc")
	expired.ExpiresAtEpochS = &past
	badB64 := payload("pay_b", "not base64!")
	badB64.ContentEncoding = contract.EncodingBase64
	tests := []struct {
		name string
		p    contract.PayloadEnvelope
		want contract.FailureClass
	}{
		{"oversized", payload("pay_big", big), contract.FailurePayloadTooLarge},
		{"digest mismatch", badDigest, contract.FailurePayloadRejected},
		{"byte_size mismatch", badSize, contract.FailurePayloadRejected},
		{"expired", expired, contract.FailurePayloadRejected},
		{"bad base64", badB64, contract.FailurePayloadRejected},
		{"no id", payload("", "abc"), contract.FailurePayloadRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, clock)
			s.MaxBytes = 1024
			_, err := s.Put(tt.p)
			if got := ClassOf(err); err == nil || got != tt.want {
				t.Fatalf("Put: %v (class %s), want %s", err, got, tt.want)
			}
			if strings.Contains(err.Error(), big) {
				t.Error("error carries the body")
			}
			if list, _ := s.List(); len(list) != 0 {
				t.Errorf("rejected payload stored: %+v", list)
			}
		})
	}
	t.Run("conflict", func(t *testing.T) {
		s := newStore(t, clock)
		if _, err := s.Put(payload("pay_c", "one")); err != nil {
			t.Fatal(err)
		}
		_, err := s.Put(payload("pay_c", "two"))
		if ClassOf(err) != contract.FailureStateConflict {
			t.Fatalf("different payload under the same id: %v", err)
		}
		if got, _ := s.Get("pay_c"); *got.Body != "one" {
			t.Error("conflicting put replaced the payload")
		}
	})
	t.Run("base64 decoded size", func(t *testing.T) {
		s := newStore(t, clock)
		raw := []byte{0, 1, 2, 255}
		p := payload("pay_bin", base64.StdEncoding.EncodeToString(raw))
		p.ContentEncoding, p.ByteSize, p.ContentDigest = contract.EncodingBase64, 4, contract.Ptr(contract.Digest(raw))
		if _, err := s.Put(p); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStoreExpiry(t *testing.T) {
	clock := newClock()
	s := newStore(t, clock)
	s.TTL = time.Hour
	own := payload("pay_own", "a")
	ownExp := clock.t.Add(10 * time.Minute).Unix()
	own.ExpiresAtEpochS = &ownExp
	for _, p := range []contract.PayloadEnvelope{payload("pay_ttl", "b"), own} {
		if _, err := s.Put(p); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	steps := []struct {
		advance     time.Duration
		wantPending []string
		wantExpired []string
	}{
		{0, []string{"pay_ttl", "pay_own"}, nil},
		{10 * time.Minute, []string{"pay_ttl"}, []string{"pay_own"}},
		{time.Hour, nil, []string{"pay_ttl"}},
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		pending, err := s.Pending()
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(pending); strings.Join(got, ",") != strings.Join(st.wantPending, ",") {
			t.Errorf("step %d: pending %v, want %v", i, got, st.wantPending)
		}
		list, _ := s.List()
		var exp []string
		for _, e := range list {
			if e.Expired {
				exp = append(exp, e.PayloadID)
			}
		}
		if strings.Join(exp, ",") != strings.Join(st.wantExpired, ",") {
			t.Errorf("step %d: List expired %v, want %v", i, exp, st.wantExpired)
		}
		removed, err := s.Expire()
		if err != nil {
			t.Fatal(err)
		}
		if len(removed) != len(st.wantExpired) {
			t.Errorf("step %d: Expire removed %+v", i, removed)
		}
		if _, err := s.Get(strings.Join(st.wantExpired, "")); len(st.wantExpired) == 1 && !errors.Is(err, ErrNotFound) {
			t.Errorf("step %d: expired payload still readable: %v", i, err)
		}
	}
}

func TestStatusFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	st, err := ReadStatus(path)
	if err != nil || st.State != StateNotAttempted {
		t.Fatalf("missing file: %+v, %v", st, err)
	}
	now := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	st = Status{State: StateFailed, Attempt: 2, PayloadPending: true, PayloadIDs: []string{"pay_1"},
		LastError: &StatusError{Message: "m", FailureClass: contract.FailurePayloadRejected, RetryClass: contract.RetryAfterReconfigure, At: now}}
	if err := WriteStatus(path, st); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	got, err := ReadStatus(path)
	if err != nil || got.State != StateFailed || got.Attempt != 2 || !got.PayloadPending || got.LastError.FailureClass != contract.FailurePayloadRejected {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte(`{"schema":"other"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStatus(path); err == nil {
		t.Error("foreign schema accepted")
	}
	for _, s := range States {
		want := s == StateStopping || s == StateRelaunching || s == StatePendingDelivery
		if s.InProgress() != want {
			t.Errorf("%s.InProgress() = %v", s, !want)
		}
	}
}

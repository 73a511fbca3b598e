// Package renewal implements reset and continuation for a wrapped harness
// session: the continuation store (private files holding opaque client
// payloads until they are delivered or expire), the renewal status file,
// and the Orchestrator that stops the harness, relaunches it with the
// payloads placed at launch, and records each step — resumable after a
// crash at any step, recording each payload's delivery once (see
// Orchestrator for the one crash window in which a payload is placed on
// two launches).
//
// Payload bodies are never logged, printed or written anywhere but the
// continuation store and where the adapter's launch placement puts them
// for the relaunched harness (see adapters.PlaceAtLaunch: a private file in
// the session folder where the harness has a file form, else its command
// line); errors name payload ids, never bodies.
package renewal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// Store defaults.
const (
	// DefaultMaxBytes bounds one payload's decoded body.
	DefaultMaxBytes = 256 << 10
	// DefaultTTL is how long a payload without its own expires_at_epoch_s
	// is kept.
	DefaultTTL = 24 * time.Hour
)

// entrySchema versions a stored payload file.
const entrySchema = "lifeloop.continuation.v1"

// Store keeps opaque continuation payloads in Dir (usually
// statedir.ContinuationPath(root, session)), one 0600 file per payload,
// until they are delivered (Drop) or expire. Several processes may use the
// same Dir: every write is atomic.
type Store struct {
	// Dir is the continuation folder; it is created (0700) when missing.
	Dir string
	// Now is the clock; default time.Now.
	Now func() time.Time
	// MaxBytes bounds a payload's decoded body (byte_size); default
	// DefaultMaxBytes.
	MaxBytes int64
	// TTL is the lifetime of a payload that carries no expires_at_epoch_s;
	// default DefaultTTL. A payload's own expiry is kept when it is
	// earlier than now+TTL.
	TTL time.Duration
}

// Entry describes one stored payload without its body.
type Entry struct {
	PayloadID   string    `json:"payload_id"`
	PayloadKind string    `json:"payload_kind"`
	ClientID    string    `json:"client_id"`
	ByteSize    uint64    `json:"byte_size"`
	Digest      string    `json:"digest"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`
	Expired     bool      `json:"expired"`
	// Undelivered is set when a renewal could not deliver the payload
	// and kept it.
	Undelivered *Undelivered `json:"undelivered,omitempty"`
}

// Undelivered labels a payload a renewal could not deliver: which
// attempt, how its receipt ended, and the conversation it was meant for
// (the harness session the renewal resumed, or started fresh from).
type Undelivered struct {
	Attempt          int                       `json:"attempt"`
	Status           contract.PlacementOutcome `json:"status"`
	Resume           bool                      `json:"resume"`
	HarnessSessionID string                    `json:"harness_session_id,omitempty"`
	At               time.Time                 `json:"at"`
}

// stored is the file format of one payload.
type stored struct {
	Schema      string                   `json:"schema"`
	Created     time.Time                `json:"created"`
	Expires     time.Time                `json:"expires"`
	Undelivered *Undelivered             `json:"undelivered,omitempty"`
	Payload     contract.PayloadEnvelope `json:"payload"`
}

// ErrNotFound means no payload with that id is stored.
var ErrNotFound = errors.New("no such continuation payload")

// Error is a renewal or store failure with its contract failure class.
type Error struct {
	Class contract.FailureClass
	Err   error
}

func (e *Error) Error() string { return string(e.Class) + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Retry is the default retry class of the failure.
func (e *Error) Retry() contract.RetryClass { return e.Class.DefaultRetry() }

func failf(class contract.FailureClass, format string, args ...any) *Error {
	return &Error{Class: class, Err: fmt.Errorf(format, args...)}
}

// ClassOf returns the failure class of err: the class of an *Error in its
// chain, else internal_error.
func ClassOf(err error) contract.FailureClass {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return contract.FailureInternalError
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *Store) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return DefaultTTL
}

// path is the file of a payload id: a digest of the id, so that any id is
// a safe file name.
func (s *Store) path(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Validate checks p as Put would, without storing it: payload_too_large
// when its body exceeds MaxBytes, payload_rejected when it is invalid or
// expired.
func (s *Store) Validate(p contract.PayloadEnvelope) error {
	limit := s.maxBytes()
	if p.ByteSize > uint64(limit) || (p.Body != nil && int64(len(*p.Body)) > 2*limit) {
		return failf(contract.FailurePayloadTooLarge, "payload %q is %d bytes; the continuation store accepts at most %d per payload", p.PayloadID, p.ByteSize, limit)
	}
	if err := p.Check(s.now()); err != nil {
		return &Error{Class: contract.FailurePayloadRejected, Err: fmt.Errorf("payload %q: %w", p.PayloadID, err)}
	}
	return nil
}

// Put validates p (see Validate) and stores it until it is dropped or
// expires. Putting the same payload again (same id, same content) is a
// no-op; a different payload under a stored id fails with state_conflict
// (drop it first).
func (s *Store) Put(p contract.PayloadEnvelope) (Entry, error) {
	if err := s.Validate(p); err != nil {
		return Entry{}, err
	}
	if err := statedir.Ensure(s.Dir); err != nil {
		return Entry{}, err
	}
	now := s.now()
	rec := stored{Schema: entrySchema, Created: now.UTC(), Expires: now.Add(s.ttl()).UTC(), Payload: p}
	if p.ExpiresAtEpochS != nil {
		if own := time.Unix(*p.ExpiresAtEpochS, 0).UTC(); own.Before(rec.Expires) {
			rec.Expires = own
		}
	}
	if old, err := s.read(s.path(p.PayloadID)); err == nil {
		a, _ := json.Marshal(old.Payload)
		b, _ := json.Marshal(p)
		if string(a) == string(b) && !s.expired(old, now) {
			return entryOf(old, now), nil
		}
		if !s.expired(old, now) {
			return Entry{}, failf(contract.FailureStateConflict, "a different payload %q is already stored; drop it first", p.PayloadID)
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return Entry{}, err
	}
	if err := statedir.WriteFileAtomic(s.path(p.PayloadID), data); err != nil {
		return Entry{}, err
	}
	return entryOf(rec, now), nil
}

func (s *Store) expired(rec stored, now time.Time) bool { return !now.Before(rec.Expires) }

func entryOf(rec stored, now time.Time) Entry {
	p := rec.Payload
	digest := ""
	if p.ContentDigest != nil {
		digest = *p.ContentDigest
	} else if b, err := p.DecodedBody(); err == nil {
		digest = contract.Digest(b)
	}
	return Entry{
		PayloadID: p.PayloadID, PayloadKind: p.PayloadKind, ClientID: p.ClientID, ByteSize: p.ByteSize,
		Digest: digest, Created: rec.Created, Expires: rec.Expires, Expired: !now.Before(rec.Expires),
		Undelivered: rec.Undelivered,
	}
}

func (s *Store) read(path string) (stored, error) {
	var rec stored
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s: not a continuation payload file: %w", path, err)
	}
	if rec.Schema != entrySchema {
		return rec, fmt.Errorf("%s: schema %q, want %q", path, rec.Schema, entrySchema)
	}
	return rec, nil
}

// Get returns the stored payload id. It fails with ErrNotFound when none
// is stored, and with payload_rejected when it has expired (the expired
// file is removed).
func (s *Store) Get(id string) (contract.PayloadEnvelope, error) {
	rec, err := s.read(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return contract.PayloadEnvelope{}, fmt.Errorf("payload %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return contract.PayloadEnvelope{}, err
	}
	if s.expired(rec, s.now()) {
		_ = os.Remove(s.path(id))
		return contract.PayloadEnvelope{}, failf(contract.FailurePayloadRejected, "payload %q expired at %s", id, rec.Expires.Format(time.RFC3339))
	}
	return rec.Payload, nil
}

// Label marks payload id as left undelivered by a renewal (u). A payload
// no longer stored is fine: there is nothing to label.
func (s *Store) Label(id string, u Undelivered) error {
	rec, err := s.read(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	rec.Undelivered = &u
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return statedir.WriteFileAtomic(s.path(id), data)
}

// Drop removes payload id. It fails with ErrNotFound when none is stored.
func (s *Store) Drop(id string) error {
	err := os.Remove(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("payload %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return err
	}
	return statedir.SyncDir(s.Dir)
}

// all reads every stored payload, oldest first (then by id). Files that
// are not continuation payloads are skipped; a missing Dir is empty.
func (s *Store) all() ([]stored, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []stored
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		rec, err := s.read(filepath.Join(s.Dir, name))
		if err != nil {
			continue
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b stored) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Payload.PayloadID, b.Payload.PayloadID)
	})
	return out, nil
}

// List describes every stored payload, expired ones included (Expired
// set), oldest first. Bodies are never part of an Entry.
func (s *Store) List() ([]Entry, error) {
	recs, err := s.all()
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]Entry, 0, len(recs))
	for _, r := range recs {
		out = append(out, entryOf(r, now))
	}
	return out, nil
}

// Pending returns the stored payloads that have not expired, oldest
// first: what the next launch should deliver.
func (s *Store) Pending() ([]contract.PayloadEnvelope, error) {
	recs, err := s.all()
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []contract.PayloadEnvelope
	for _, r := range recs {
		if !s.expired(r, now) {
			out = append(out, r.Payload)
		}
	}
	return out, nil
}

// Expire removes every expired payload and returns what it removed.
func (s *Store) Expire() ([]Entry, error) {
	recs, err := s.all()
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []Entry
	for _, r := range recs {
		if !s.expired(r, now) {
			continue
		}
		if err := os.Remove(s.path(r.Payload.PayloadID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, err
		}
		out = append(out, entryOf(r, now))
	}
	if len(out) > 0 {
		return out, statedir.SyncDir(s.Dir)
	}
	return out, nil
}

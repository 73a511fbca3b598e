package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/lifeloop/lifeloop/contract"
)

// KeyConflictError says an idempotency key already belongs to another
// moment of the ledger: recording this one under it would be refused
// (state_conflict).
type KeyConflictError struct {
	Key      string
	Event    contract.Event // the moment the key belongs to
	Sequence uint64         // and where the ledger records it
}

func (e *KeyConflictError) Error() string {
	return fmt.Sprintf("idempotency key %q was already used for %s at sequence %d (state_conflict); nothing was recorded: give this moment a key of its own",
		e.Key, e.Event, e.Sequence)
}

// CheckKey answers, before anything is recorded, whether the moment ev
// with payloads may be recorded under idempotency key key of client and
// adapter in the ledger at path, as Append would decide:
//
//   - the key is unused: ok false, err nil;
//   - it holds the same moment (event and payload ids, in order): a
//     retry, answered with the receipt it holds (ok true);
//   - it holds another moment: a *KeyConflictError.
//
// An empty key, or a ledger that does not exist yet, holds nothing.
func CheckKey(path, client, adapter, key string, ev contract.Event, payloads []contract.PayloadEnvelope) (contract.LifecycleReceipt, bool, error) {
	if key == "" {
		return contract.LifecycleReceipt{}, false, nil
	}
	r, found, err := KeyHolder(path, client, adapter, key)
	switch {
	case err != nil || !found:
		return contract.LifecycleReceipt{}, false, err
	case r.Event == ev && samePayloadIDs(r, payloads):
		return r, true, nil
	}
	seq := uint64(0)
	if r.Sequence != nil {
		seq = *r.Sequence
	}
	return r, false, &KeyConflictError{Key: key, Event: r.Event, Sequence: seq}
}

// KeyHolder returns the receipt the ledger at path records first under
// idempotency key key of client and adapter (adapter "" matches any):
// the one Append compares a new receipt under that key with. Only
// complete lines that hold the key are decoded; lines that cannot be
// read are Verify's to report.
func KeyHolder(path, client, adapter, key string) (contract.LifecycleReceipt, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return contract.LifecycleReceipt{}, false, nil
	}
	if err != nil {
		return contract.LifecycleReceipt{}, false, err
	}
	defer f.Close()
	quoted, _ := json.Marshal(key)
	needle := append([]byte(`"idempotency_key":`), quoted...)
	s := newLineScanner(f, 0)
	for ln, ok := s.Next(); ok; ln, ok = s.Next() {
		if ln.TooLong || !bytes.Contains(ln.Data, needle) {
			continue
		}
		h, err := parseHead(ln.Data)
		if err != nil || h.IdempotencyKey == nil || *h.IdempotencyKey != key || h.ClientID != client || adapter != "" && h.AdapterID != adapter {
			continue
		}
		var r contract.LifecycleReceipt
		if json.Unmarshal(ln.Data, &r) != nil {
			continue
		}
		return r, true, nil
	}
	return contract.LifecycleReceipt{}, false, s.Err()
}

// samePayloadIDs reports whether r accounts for exactly the payloads
// given (by id, in order).
func samePayloadIDs(r contract.LifecycleReceipt, payloads []contract.PayloadEnvelope) bool {
	if len(r.PayloadReceipts) != len(payloads) {
		return false
	}
	for i, p := range payloads {
		if r.PayloadReceipts[i].PayloadID != p.PayloadID {
			return false
		}
	}
	return true
}

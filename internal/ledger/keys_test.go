package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// CheckKey answers as Append would decide, before anything is recorded.
func TestCheckKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	if _, ok, err := CheckKey(path, "test-client", "codex", "K1", contract.EventContextCompacted, nil); ok || err != nil {
		t.Fatalf("no ledger yet: ok %v, err %v", ok, err)
	}
	l := openTest(t, path)
	keyed := func(ev contract.Event, key string) contract.LifecycleReceipt {
		r := testReceipt(ev)
		r.IdempotencyKey = contract.Ptr(key)
		return r
	}
	mustAppend(t, l, testReceipt(contract.EventSessionStarted), AppendOptions{})
	first, _ := mustAppend(t, l, keyed(contract.EventContextCompacted, "K1"), AppendOptions{})
	// The ledger's own conflict receipt under K1 comes later: the first
	// receipt under a key is its holder.
	mustAppend(t, l, keyed(contract.EventFrameEnded, "K1"), AppendOptions{})
	// A torn tail that names K2 is not a receipt.
	l.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"sequence":9,"idempotency_key":"K2","client_id":"test-client","event":"frame.opened"`)
	f.Close()

	tests := []struct {
		name            string
		client, adapter string
		key             string
		ev              contract.Event
		wantRetry       bool
		wantConflict    bool
	}{
		{"no key", "test-client", "codex", "", contract.EventFrameEnded, false, false},
		{"unused key", "test-client", "codex", "K3", contract.EventFrameEnded, false, false},
		{"the same moment: a retry", "test-client", "codex", "K1", contract.EventContextCompacted, true, false},
		{"any adapter", "test-client", "", "K1", contract.EventContextCompacted, true, false},
		{"another moment", "test-client", "codex", "K1", contract.EventFrameEnded, false, true},
		{"another client's key", "other", "codex", "K1", contract.EventFrameEnded, false, false},
		{"another adapter's key", "test-client", "claude", "K1", contract.EventFrameEnded, false, false},
		{"a torn tail holds nothing", "test-client", "codex", "K2", contract.EventFrameEnded, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, retry, err := CheckKey(path, tc.client, tc.adapter, tc.key, tc.ev, nil)
			var conflict *KeyConflictError
			if retry != tc.wantRetry || errors.As(err, &conflict) != tc.wantConflict || err != nil && !tc.wantConflict {
				t.Fatalf("retry %v, err %v; want retry %v, conflict %v", retry, err, tc.wantRetry, tc.wantConflict)
			}
			if retry && r.ReceiptID != first.ReceiptID {
				t.Errorf("retry answered with %s, want the first receipt %s", r.ReceiptID, first.ReceiptID)
			}
			if tc.wantConflict && (conflict.Event != contract.EventContextCompacted || conflict.Sequence != *first.Sequence) {
				t.Errorf("conflict names %s at %d, want context.compacted at %d", conflict.Event, conflict.Sequence, *first.Sequence)
			}
		})
	}
	// Payloads are part of the moment.
	_, _, err = CheckKey(path, "test-client", "codex", "K1", contract.EventContextCompacted, []contract.PayloadEnvelope{{PayloadID: "pay_x"}})
	if _, ok := errors.AsType[*KeyConflictError](err); !ok {
		t.Errorf("another payload under K1: err %v, want a conflict", err)
	}
}

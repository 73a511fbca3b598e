// Package testutil holds small helpers shared by lifeloop's tests.
//
// It imports only the standard library and lifeloop's contract package,
// so any package other than contract itself can use it from its internal
// tests without an import cycle.
package testutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// SyncBuffer is a mutex-guarded bytes.Buffer usable as an io.Writer from
// one goroutine while another reads it. The zero value is ready to use.
type SyncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	notify chan struct{} // closed and replaced on every Write
}

// changed returns the channel closed by the next Write; b.mu must be held.
func (b *SyncBuffer) changed() chan struct{} {
	if b.notify == nil {
		b.notify = make(chan struct{})
	}
	return b.notify
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	close(b.changed())
	b.notify = make(chan struct{})
	return n, err
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WaitContains blocks until the buffer contains s, failing the test if it
// does not within timeout. It wakes on each Write rather than polling.
func (b *SyncBuffer) WaitContains(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		b.mu.Lock()
		ok := strings.Contains(b.buf.String(), s)
		ch := b.changed()
		b.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("output never contained %q; got %q", s, b.String())
		}
	}
}

// WaitTimeout bounds WaitFor. It only guards against a hung test; it is
// not a timing assertion.
const WaitTimeout = 20 * time.Second

// WaitFor polls cond until it holds, failing the test if it does not
// within WaitTimeout.
func WaitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", WaitTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Payload builds a valid UTF-8 payload envelope carrying body, with its
// byte size and digest filled in. Callers override the descriptive fields
// (ClientID, PayloadKind, Format) their tests assert on.
func Payload(id, body string, placements ...contract.AcceptablePlacement) contract.PayloadEnvelope {
	return contract.PayloadEnvelope{
		SchemaVersion: contract.PayloadSchemaVersion, PayloadID: id, ClientID: "test", PayloadKind: "note",
		Format: "text/plain", ContentEncoding: contract.EncodingUTF8, Body: &body, ByteSize: uint64(len(body)),
		ContentDigest: contract.Ptr(contract.Digest([]byte(body))), AcceptablePlacements: placements,
	}
}

// AppendReceipt appends one receipt line to the ledger file at path, with
// the fields the views read: the adapter, event, sequence seq, at (the
// fixture's clock) plus seq seconds, and the telemetry summary.
func AppendReceipt(t testing.TB, path, adapter string, seq int, event string, at time.Time, summary map[string]any) {
	t.Helper()
	line, err := json.Marshal(map[string]any{
		"receipt_id": fmt.Sprintf("lfr_%d", seq), "idempotency_key": nil, "client_id": "lifeloop", "adapter_id": adapter,
		"invocation_id": "inv_1", "event": event, "event_id": fmt.Sprintf("evt_%d", seq), "sequence": seq,
		"parent_receipt_id": nil, "integration_mode": "launcher_wrapper", "status": "observed",
		"at_epoch_s": at.Unix() + int64(seq), "telemetry_summary": summary, "failure_class": nil, "retry_class": nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
}

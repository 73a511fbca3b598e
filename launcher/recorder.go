package launcher

import (
	"context"

	"github.com/lifeloop/lifeloop/contract"
)

// Moment is one lifecycle fact the supervisor reports. The Recorder (the
// router) turns it into a receipt: ids, sequence, ledger, sinks, clients.
type Moment struct {
	Event            contract.Event
	Status           contract.ReceiptStatus // empty: observed
	Failure          *contract.FailureClass
	Parent           *string // parent receipt id
	Frame            *contract.FrameContext
	HarnessSessionID string
	Summary          map[string]any
	Payloads         []contract.PayloadEnvelope
	PayloadReceipts  []contract.PayloadReceipt
	Degradations     []contract.CapabilityDegradation
	Warnings         []contract.Warning
	IdempotencyKey   *string
	// EventID is the harness's own stable id for the moment, if any.
	EventID string
}

// Recorder records moments as receipts. Record must not block on clients:
// a slow client never delays the harness.
type Recorder interface {
	Record(ctx context.Context, m Moment) (contract.LifecycleReceipt, error)
}

// SyncResult is what recording a moment with synchronous clients returns:
// the receipt, the placement decisions for the moment's payloads followed
// by those for the payloads clients returned, and those client payloads.
type SyncResult struct {
	Receipt        contract.LifecycleReceipt
	Placements     []contract.PlacementDecision
	ClientPayloads []contract.PayloadEnvelope
}

// SyncRecorder records a moment whose clients must answer now (a hook
// that can still place their payloads), within the clients' timeout.
type SyncRecorder interface {
	RecordSync(ctx context.Context, m Moment) (SyncResult, error)
}

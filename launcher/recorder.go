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
}

// Recorder records moments as receipts. Record must not block on clients:
// a slow client never delays the harness.
type Recorder interface {
	Record(ctx context.Context, m Moment) (contract.LifecycleReceipt, error)
}

package launcher

import (
	"context"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/moment"
)

// Moment is one lifecycle fact the supervisor reports (see package
// moment).
type Moment = moment.Moment

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
	// payloads are the recorded moment's own payloads, to which
	// Placements' first decisions belong.
	payloads []contract.PayloadEnvelope
}

// SyncRecorder records a moment whose clients must answer now (a hook
// that can still place their payloads), within the clients' timeout.
type SyncRecorder interface {
	RecordSync(ctx context.Context, m Moment) (SyncResult, error)
}

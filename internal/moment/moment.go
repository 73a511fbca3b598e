// Package moment is the lifecycle fact every source reports — the
// harness process, its hooks, its telemetry, an operator, a client
// dispatch — and the router turns into a receipt.
package moment

import "github.com/lifeloop/lifeloop/contract"

// Moment is one lifecycle fact. The router turns it into a receipt: ids,
// sequence, ledger, sinks, clients.
type Moment struct {
	Event contract.Event
	// EventID is the harness's own stable id for the moment, if any.
	EventID          string
	HarnessSessionID string
	HarnessRunID     string
	HarnessTaskID    string
	Frame            *contract.FrameContext
	// Parent is the id of the receipt this one follows from.
	Parent *string
	// Payloads are delivered with the moment; each is checked, placed and
	// echoed in payload_receipts.
	Payloads []contract.PayloadEnvelope
	// PayloadReceipts are receipts for payloads the reporter placed
	// itself (a renewal's launch placement); they are echoed as they are.
	PayloadReceipts []contract.PayloadReceipt
	IdempotencyKey  *string
	// ExternalSequence is the moment's number in an external scope (a
	// harness event counter); the ledger detects gaps in it.
	// ExternalScope defaults to "<adapter_id>:<harness_session_id>".
	ExternalSequence *uint64
	ExternalScope    string
	// InvocationID overrides the router's invocation id for this receipt.
	InvocationID string
	// Summary is the receipt's telemetry_summary.
	Summary      map[string]any
	Degradations []contract.CapabilityDegradation
	Warnings     []contract.Warning
	// Metadata is passed to clients in the callback request.
	Metadata map[string]any
	// Status overrides the status the router synthesizes (e.g. skipped);
	// empty or failed leaves it to the router. Failure marks the moment
	// itself failed (e.g. the launcher failed before exec): status
	// failed, with Retry or the class's default retry.
	Status  contract.ReceiptStatus
	Failure *contract.FailureClass
	Retry   *contract.RetryClass
}

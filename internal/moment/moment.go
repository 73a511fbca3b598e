// Package moment is the lifecycle fact every source reports — the
// harness process, its hooks, its telemetry, an operator — before it
// becomes a receipt.
package moment

import (
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/router"
)

// Moment is one lifecycle fact. The router turns it into a receipt: ids,
// sequence, ledger, sinks, clients.
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

// Input is the router input that records m.
func (m Moment) Input() router.Input {
	in := router.Input{
		Event:            m.Event,
		EventID:          m.EventID,
		HarnessSessionID: m.HarnessSessionID,
		FrameContext:     m.Frame,
		Payloads:         m.Payloads,
		PayloadReceipts:  m.PayloadReceipts,
		ParentReceiptID:  m.Parent,
		TelemetrySummary: m.Summary,
		Degradations:     m.Degradations,
		Warnings:         m.Warnings,
		Failure:          m.Failure,
		IdempotencyKey:   m.IdempotencyKey,
	}
	if m.Status != "" && m.Status != contract.StatusFailed {
		st := m.Status
		in.Status = &st
	}
	return in
}

package renewal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// StatusFile is the renewal status file's name in a session folder.
const StatusFile = "renewal.json"

// statusSchema versions renewal.json.
const statusSchema = "lifeloop.renewal.v1"

// StatusPath returns the renewal status file of a session folder.
func StatusPath(sessionDir string) string { return filepath.Join(sessionDir, StatusFile) }

// State is where a session's latest renewal is.
type State string

// Renewal states. stopping, relaunching and pending_delivery are in
// progress: a renewal found in one of them after a crash is finished by
// Orchestrator.Recover.
const (
	StateNotAttempted    State = "not_attempted"    // no renewal yet
	StateStopping        State = "stopping"         // payloads stored, the harness being stopped
	StateRelaunching     State = "relaunching"      // harness stopped, being started again
	StatePendingDelivery State = "pending_delivery" // harness started with the payloads placed; not yet recorded
	StateDelivered       State = "delivered"        // recorded, every payload delivered and dropped
	StateUndelivered     State = "undelivered"      // harness started again, but payloads in UndeliveredIDs were not delivered
	StateFailed          State = "failed"           // a step failed; see LastError
	StateExpired         State = "expired"          // payloads expired before they could be delivered
)

// States lists every State.
var States = []State{StateNotAttempted, StateStopping, StateRelaunching, StatePendingDelivery, StateDelivered, StateUndelivered, StateFailed, StateExpired}

// InProgress reports whether a renewal in state s has not finished.
func (s State) InProgress() bool {
	switch s {
	case StateStopping, StateRelaunching, StatePendingDelivery:
		return true
	case StateNotAttempted, StateDelivered, StateUndelivered, StateFailed, StateExpired:
		return false
	}
	return false
}

// StatusError is the last failure of a renewal.
type StatusError struct {
	Message      string                `json:"message"`
	FailureClass contract.FailureClass `json:"failure_class"`
	RetryClass   contract.RetryClass   `json:"retry_class"`
	At           time.Time             `json:"at"`
}

// Status is the content of renewal.json. It never holds a payload body:
// only whether payloads are pending, their ids and their receipts.
type Status struct {
	Schema  string `json:"schema"`
	State   State  `json:"state"`
	Attempt int    `json:"attempt"`
	// Resume says the relaunch continues the harness conversation.
	Resume bool `json:"resume"`
	// Reason is the operator's or client's reason for the renewal.
	Reason string `json:"reason,omitempty"`
	// Policy is the evidence of a policy client's renewal (Request.Policy),
	// nil for a person's.
	Policy *Policy `json:"policy,omitempty"`
	// PayloadPending is true while payloads of this renewal wait in the
	// continuation store: before delivery, and after it for those it
	// could not deliver and kept.
	PayloadPending bool `json:"payload_pending"`
	// PayloadIDs are the payloads this renewal delivers (set when the
	// harness is started with them).
	PayloadIDs []string `json:"payload_ids"`
	// UndeliveredIDs are stored payloads this renewal's relaunch could not
	// place (their receipts say failed or skipped). They are kept, labelled
	// (Entry.Undelivered), for a later renewal that can place them, or
	// dropped when DropUndelivered is set.
	UndeliveredIDs  []string `json:"undelivered_payload_ids,omitempty"`
	DropUndelivered bool     `json:"drop_undelivered,omitempty"`
	// CarriedIDs are payloads this renewal delivered that an earlier
	// renewal had left undelivered: they reach a conversation other than
	// the one they were first meant for, and say so.
	CarriedIDs []string `json:"carried_payload_ids,omitempty"`
	// ExpiredIDs are payloads of this renewal that expired before the
	// relaunch could deliver them.
	ExpiredIDs []string `json:"expired_payload_ids,omitempty"`
	// Placement is the manifest placement the payloads were delivered
	// through, or "".
	Placement contract.ManifestPlacementClass `json:"placement,omitempty"`
	// PayloadReceipts are the receipts of this renewal's payloads.
	PayloadReceipts []contract.PayloadReceipt `json:"payload_receipts"`
	// HarnessSessionID is the harness session the renewal started from.
	HarnessSessionID string `json:"harness_session_id,omitempty"`
	// ContinuedIn is the lifeloop session that records the harness session
	// after the renewal, when the harness continued it in a process of its
	// own (a background session's renewal); "" when the relaunch is this
	// session's.
	ContinuedIn string `json:"continued_in,omitempty"`
	// Receipt ids recorded for each step ("" until recorded); a recovery
	// never records a step twice.
	EndingReceiptID   string `json:"ending_receipt_id,omitempty"`
	EndedReceiptID    string `json:"ended_receipt_id,omitempty"`
	StartingReceiptID string `json:"starting_receipt_id,omitempty"`
	StartedReceiptID  string `json:"started_receipt_id,omitempty"`
	// Recovered is true when the renewal was finished by Recover.
	Recovered  bool         `json:"recovered,omitempty"`
	LastError  *StatusError `json:"last_error"`
	StartedAt  *time.Time   `json:"started_at"`
	FinishedAt *time.Time   `json:"finished_at"`
	UpdatedAt  time.Time    `json:"updated_at"`
}

// ReadStatus reads renewal.json at path; a missing file is a status in
// state not_attempted.
func ReadStatus(path string) (Status, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Status{Schema: statusSchema, State: StateNotAttempted, PayloadIDs: []string{}, PayloadReceipts: []contract.PayloadReceipt{}}, nil
	}
	if err != nil {
		return Status{}, err
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		return Status{}, fmt.Errorf("%s: not a renewal status: %w", path, err)
	}
	if st.Schema != statusSchema {
		return Status{}, fmt.Errorf("%s: schema %q, want %q", path, st.Schema, statusSchema)
	}
	return st, nil
}

// WriteStatus atomically writes st to path (0600).
func WriteStatus(path string, st Status) error {
	st.Schema = statusSchema
	if st.PayloadIDs == nil {
		st.PayloadIDs = []string{}
	}
	if st.PayloadReceipts == nil {
		st.PayloadReceipts = []contract.PayloadReceipt{}
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return statedir.WriteFileAtomic(path, append(b, '\n'))
}

package contract

// Struct tags in this package follow one convention, which the strict
// decoder (decode.go) enforces:
//
//   - `json:"k"` on a non-pointer field: key k is required and must not be
//     null.
//   - `json:"k"` on a pointer field: key k is required but may be null
//     (required-nullable; always encoded, as null when nil).
//   - `json:"k,omitempty"`: key k is optional; null means absent.
//   - `contract:"optional"` next to a `json:"k"` pointer: always encoded,
//     but a decoder tolerates the key being absent.

// ContentEncoding values accepted on PayloadEnvelope.content_encoding.
const (
	EncodingUTF8   = "utf8"
	EncodingBase64 = "base64"
)

// ContentEncodings lists the accepted payload content encodings.
var ContentEncodings = []string{EncodingUTF8, EncodingBase64}

// FrameContext identifies the execution frame a frame.* event belongs to.
// A top_level frame has no parent; a subcall frame names its parent.
type FrameContext struct {
	FrameID       string     `json:"frame_id"`
	ParentFrameID *string    `json:"parent_frame_id,omitempty"`
	FrameClass    FrameClass `json:"frame_class"`
}

// AcceptablePlacement is one entry of a payload's ordered list of
// alternative placements.
type AcceptablePlacement struct {
	Placement   PlacementClass   `json:"placement"`
	Requirement RequirementLevel `json:"requirement"`
}

// PayloadRef names, sizes and optionally digests a payload that a
// CallbackRequest refers to without carrying its body.
type PayloadRef struct {
	PayloadID     string  `json:"payload_id"`
	PayloadKind   string  `json:"payload_kind"`
	ContentDigest *string `json:"content_digest,omitempty"`
	ByteSize      *uint64 `json:"byte_size,omitempty"`
}

// PayloadEnvelope is one opaque client payload. Lifeloop checks its size,
// digest, encoding, expiry and placement, and never parses its body.
// Exactly one of Body and BodyRef is set.
type PayloadEnvelope struct {
	SchemaVersion   SchemaVersion `json:"schema_version"`
	PayloadID       string        `json:"payload_id"`
	ClientID        string        `json:"client_id"`
	PayloadKind     string        `json:"payload_kind"`
	Format          string        `json:"format"`
	ContentEncoding string        `json:"content_encoding"`
	// Body is the payload text as transported: the raw text for utf8, the
	// base64 text for base64.
	Body *string `json:"body,omitempty"`
	// BodyRef points at the body elsewhere; Lifeloop never dereferences it.
	BodyRef *string `json:"body_ref,omitempty"`
	// ByteSize is the size of the decoded body in bytes.
	ByteSize uint64 `json:"byte_size"`
	// ContentDigest is "sha256:<64 lowercase hex>" of the decoded body.
	ContentDigest        *string               `json:"content_digest,omitempty"`
	AcceptablePlacements []AcceptablePlacement `json:"acceptable_placements"`
	IdempotencyKey       *string               `json:"idempotency_key,omitempty"`
	ExpiresAtEpochS      *int64                `json:"expires_at_epoch_s,omitempty"`
	Redaction            *string               `json:"redaction,omitempty"`
	// Metadata is for client correlation only; Lifeloop may echo it but
	// assigns no meaning to its keys.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PayloadReceipt records what happened to one payload inside a receipt.
// ContentDigest echoes the payload's digest and is omitted when the
// payload carried none.
type PayloadReceipt struct {
	PayloadID     string           `json:"payload_id"`
	PayloadKind   string           `json:"payload_kind"`
	Placement     PlacementClass   `json:"placement"`
	Status        PlacementOutcome `json:"status"`
	ByteSize      uint64           `json:"byte_size"`
	ContentDigest *string          `json:"content_digest,omitempty"`
}

// CapabilityDegradation names a capability whose support changed after
// negotiation, and the transition.
type CapabilityDegradation struct {
	Capability       string       `json:"capability"`
	PreviousSupport  SupportState `json:"previous_support"`
	CurrentSupport   SupportState `json:"current_support"`
	ObservedAtEpochS *int64       `json:"observed_at_epoch_s,omitempty"`
	Evidence         *string      `json:"evidence,omitempty"`
	RetryClass       *RetryClass  `json:"retry_class,omitempty"`
}

// Warning is a machine-readable note on a receipt or response.
type Warning struct {
	Code       string  `json:"code"`
	Message    string  `json:"message"`
	Capability *string `json:"capability,omitempty"`
}

// LifecycleReceipt is the bounded record every lifecycle operation emits.
// IdempotencyKey, Sequence, ParentReceiptID, FailureClass and RetryClass
// are required-nullable: always encoded, null when nil, and a decode that
// lacks any of those keys fails.
type LifecycleReceipt struct {
	SchemaVersion  SchemaVersion `json:"schema_version"`
	ReceiptID      string        `json:"receipt_id"`
	IdempotencyKey *string       `json:"idempotency_key"`
	ClientID       string        `json:"client_id"`
	AdapterID      string        `json:"adapter_id"`
	// InvocationID is shared by every receipt of one transport invocation.
	InvocationID string `json:"invocation_id"`
	Event        Event  `json:"event"`
	EventID      string `json:"event_id"`
	// Sequence is monotonic within the strongest durable session scope;
	// nil when no harness sequencing or receipt ledger exists.
	Sequence *uint64 `json:"sequence"`
	// ParentReceiptID is nil for root receipts.
	ParentReceiptID *string         `json:"parent_receipt_id"`
	IntegrationMode IntegrationMode `json:"integration_mode"`
	Status          ReceiptStatus   `json:"status"`
	AtEpochS        int64           `json:"at_epoch_s"`
	// The harness identifiers are optional: omitted when unknown, and a
	// null on input reads as absent.
	HarnessSessionID       *string                 `json:"harness_session_id,omitempty"`
	HarnessRunID           *string                 `json:"harness_run_id,omitempty"`
	HarnessTaskID          *string                 `json:"harness_task_id,omitempty"`
	PayloadReceipts        []PayloadReceipt        `json:"payload_receipts,omitempty"`
	TelemetrySummary       map[string]any          `json:"telemetry_summary,omitempty"`
	CapabilityDegradations []CapabilityDegradation `json:"capability_degradations,omitempty"`
	FailureClass           *FailureClass           `json:"failure_class"`
	RetryClass             *RetryClass             `json:"retry_class"`
	Warnings               []Warning               `json:"warnings,omitempty"`
}

// ReceiptRequiredNullable lists the receipt keys that must be present even
// when null.
var ReceiptRequiredNullable = []string{"idempotency_key", "sequence", "parent_receipt_id", "failure_class", "retry_class"}

// CallbackRequest is what a client receives about one lifecycle event.
type CallbackRequest struct {
	SchemaVersion         string          `json:"schema_version"`
	Event                 Event           `json:"event"`
	EventID               string          `json:"event_id"`
	AdapterID             string          `json:"adapter_id"`
	AdapterVersion        string          `json:"adapter_version"`
	IntegrationMode       IntegrationMode `json:"integration_mode"`
	InvocationID          string          `json:"invocation_id"`
	HarnessSessionID      *string         `json:"harness_session_id,omitempty"`
	HarnessRunID          *string         `json:"harness_run_id,omitempty"`
	HarnessTaskID         *string         `json:"harness_task_id,omitempty"`
	FrameContext          *FrameContext   `json:"frame_context,omitempty"`
	CapabilitySnapshotRef *string         `json:"capability_snapshot_ref,omitempty"`
	PayloadRefs           []PayloadRef    `json:"payload_refs,omitempty"`
	Sequence              *uint64         `json:"sequence,omitempty"`
	IdempotencyKey        *string         `json:"idempotency_key,omitempty"`
	Metadata              map[string]any  `json:"metadata,omitempty"`
}

// CallbackResponse is what a client returns for one CallbackRequest.
// FailureClass and RetryClass are always encoded (null when nil) but may
// be absent on input.
type CallbackResponse struct {
	SchemaVersion  string            `json:"schema_version"`
	Status         ReceiptStatus     `json:"status"`
	ClientPayloads []PayloadEnvelope `json:"client_payloads,omitempty"`
	ReceiptRefs    []string          `json:"receipt_refs,omitempty"`
	Warnings       []Warning         `json:"warnings,omitempty"`
	FailureClass   *FailureClass     `json:"failure_class" contract:"optional"`
	RetryClass     *RetryClass       `json:"retry_class" contract:"optional"`
	Metadata       map[string]any    `json:"metadata,omitempty"`
}

// DispatchEnvelope is the single document a subprocess client reads on
// stdin: the request plus the payload envelopes it is delivered with.
// Payloads is omitted on the wire when empty. Cross-correlation between
// Request.PayloadRefs and Payloads is deliberately not checked here.
type DispatchEnvelope struct {
	SchemaVersion string            `json:"schema_version"`
	Request       CallbackRequest   `json:"request"`
	Payloads      []PayloadEnvelope `json:"payloads,omitempty"`
}

// ValidationError says which field of an envelope is wrong and why. Field
// is a JSON path such as "payload_receipts[0].payload_id"; it is empty for
// document-level problems.
type ValidationError struct {
	Field string
	Msg   string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

package contract

// AdapterManifest is an adapter's honest report of its lifecycle
// behaviour, exposed before any client negotiation. The first ten fields
// are required; the rest are optional and omitted when empty.
type AdapterManifest struct {
	ContractVersion  string                                      `json:"contract_version"`
	AdapterID        string                                      `json:"adapter_id"`
	AdapterVersion   string                                      `json:"adapter_version"`
	DisplayName      string                                      `json:"display_name"`
	Role             AdapterRole                                 `json:"role"`
	IntegrationModes []IntegrationMode                           `json:"integration_modes"`
	LifecycleEvents  map[Event]EventSupport                      `json:"lifecycle_events"`
	Placement        map[ManifestPlacementClass]PlacementSupport `json:"placement"`
	ContextPressure  ContextPressureSupport                      `json:"context_pressure"`
	Receipts         ReceiptsSupport                             `json:"receipts"`

	SessionIdentity   *SessionIdentitySupport `json:"session_identity,omitempty"`
	SessionRename     *SupportClaim           `json:"session_rename,omitempty"`
	Renewal           *RenewalSupport         `json:"renewal,omitempty"`
	ApprovalSurface   *SupportClaim           `json:"approval_surface,omitempty"`
	FailureModes      []FailureClass          `json:"failure_modes,omitempty"`
	TelemetrySources  []TelemetrySource       `json:"telemetry_sources,omitempty"`
	KnownDegradations []KnownDegradation      `json:"known_degradations,omitempty"`
}

// EventSupport is a per-event claim. Modes lists the integration modes
// through which the event is delivered; it may be empty only when Support
// is unavailable.
type EventSupport struct {
	Support SupportState      `json:"support"`
	Modes   []IntegrationMode `json:"modes,omitempty"`
}

// PlacementSupport is a per-placement claim with an optional size limit.
type PlacementSupport struct {
	Support  SupportState `json:"support"`
	MaxBytes *int         `json:"max_bytes,omitempty"`
}

// ContextPressureSupport says how the adapter surfaces
// context.pressure_observed evidence.
type ContextPressureSupport struct {
	Support  SupportState `json:"support"`
	Evidence *string      `json:"evidence,omitempty"`
}

// ReceiptsSupport says who emits receipts and whether a durable
// cross-invocation receipt ledger exists.
type ReceiptsSupport struct {
	Native              bool         `json:"native"`
	LifeloopSynthesized bool         `json:"lifeloop_synthesized"`
	ReceiptLedger       SupportState `json:"receipt_ledger"`
}

// SessionIdentitySupport holds per-identifier support claims.
type SessionIdentitySupport struct {
	HarnessSessionID SupportState `json:"harness_session_id"`
	HarnessRunID     SupportState `json:"harness_run_id"`
	HarnessTaskID    SupportState `json:"harness_task_id"`
}

// SupportClaim is a bare support claim (session rename, approval surface).
type SupportClaim struct {
	Support SupportState `json:"support"`
}

// RenewalSupport describes whether an adapter can prove a safe
// reset/continuation path. It is capability evidence only: clients decide
// whether a renewal is allowed.
type RenewalSupport struct {
	Reset        RenewalReset        `json:"reset"`
	Continuation RenewalContinuation `json:"continuation"`
	// Profiles are host integration profile ids the claim depends on;
	// empty means profile-independent.
	Profiles []string `json:"profiles,omitempty"`
	// Evidence is human-readable and must not carry client tokens.
	Evidence *string `json:"evidence,omitempty"`
}

// RenewalReset holds the three reset paths.
type RenewalReset struct {
	Native          SupportState `json:"native"`
	WrapperMediated SupportState `json:"wrapper_mediated"`
	Manual          SupportState `json:"manual"`
}

// RenewalContinuation separates observing the post-reset boundary from
// carrying client payloads across it.
type RenewalContinuation struct {
	Observation     SupportState `json:"observation"`
	PayloadDelivery SupportState `json:"payload_delivery"`
}

// TelemetrySource is one telemetry source the adapter reads for evidence.
type TelemetrySource struct {
	Source  string       `json:"source"`
	Support SupportState `json:"support"`
}

// KnownDegradation is a capability degradation the adapter ships with.
type KnownDegradation struct {
	Capability      string       `json:"capability"`
	PreviousSupport SupportState `json:"previous_support"`
	CurrentSupport  SupportState `json:"current_support"`
	Evidence        *string      `json:"evidence,omitempty"`
}

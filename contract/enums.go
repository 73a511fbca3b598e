package contract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Event is a lifecycle event name: a stable lowercase dot-separated string.
type Event string

// The lifecycle event vocabulary, in contract order.
const (
	EventSessionStarting         Event = "session.starting"
	EventSessionStarted          Event = "session.started"
	EventFrameOpening            Event = "frame.opening"
	EventFrameOpened             Event = "frame.opened"
	EventContextPressureObserved Event = "context.pressure_observed"
	EventContextCompacted        Event = "context.compacted"
	EventFrameEnding             Event = "frame.ending"
	EventFrameEnded              Event = "frame.ended"
	EventSessionEnding           Event = "session.ending"
	EventSessionEnded            Event = "session.ended"
	EventSupervisorTick          Event = "supervisor.tick"
	EventCapabilityDegraded      Event = "capability.degraded"
	EventReceiptEmitted          Event = "receipt.emitted"
	EventReceiptGapDetected      Event = "receipt.gap_detected"
)

// Events lists every lifecycle event in contract order.
var Events = []Event{
	EventSessionStarting, EventSessionStarted,
	EventFrameOpening, EventFrameOpened,
	EventContextPressureObserved, EventContextCompacted,
	EventFrameEnding, EventFrameEnded,
	EventSessionEnding, EventSessionEnded,
	EventSupervisorTick, EventCapabilityDegraded,
	EventReceiptEmitted, EventReceiptGapDetected,
}

// IsFrame reports whether e is one of the four frame.* events, which
// describe one execution frame inside a session and need a frame_context.
func (e Event) IsFrame() bool {
	switch e {
	case EventFrameOpening, EventFrameOpened, EventFrameEnding, EventFrameEnded:
		return true
	default:
		return false
	}
}

// IsSession reports whether e is one of the four session.* events, which
// describe the top-level harness lifecycle.
func (e Event) IsSession() bool {
	switch e {
	case EventSessionStarting, EventSessionStarted, EventSessionEnding, EventSessionEnded:
		return true
	default:
		return false
	}
}

// Valid reports whether e is a known event.
func (e Event) Valid() bool { return slices.Contains(Events, e) }

// UnmarshalText accepts only known event names.
func (e *Event) UnmarshalText(b []byte) error { return parseEnum(e, "event", Events, b) }

// SupportState says how strongly an adapter satisfies a capability claim.
type SupportState string

// Support states, strongest first.
const (
	SupportNative      SupportState = "native"
	SupportSynthesized SupportState = "synthesized"
	SupportManual      SupportState = "manual"
	SupportPartial     SupportState = "partial"
	SupportUnavailable SupportState = "unavailable"
)

// SupportStates lists every support state.
var SupportStates = []SupportState{SupportNative, SupportSynthesized, SupportManual, SupportPartial, SupportUnavailable}

// Valid reports whether s is a known support state.
func (s SupportState) Valid() bool { return slices.Contains(SupportStates, s) }

// UnmarshalText accepts only known support states.
func (s *SupportState) UnmarshalText(b []byte) error {
	return parseEnum(s, "support state", SupportStates, b)
}

// IntegrationMode is how an adapter is wired to a harness.
type IntegrationMode string

// Integration modes.
const (
	ModeManualSkill      IntegrationMode = "manual_skill"
	ModeLauncherWrapper  IntegrationMode = "launcher_wrapper"
	ModeNativeHook       IntegrationMode = "native_hook"
	ModeReferenceAdapter IntegrationMode = "reference_adapter"
	// ModeTelemetryOnly observes lifecycle evidence from logs or activity
	// files but cannot inject payloads or control the harness.
	ModeTelemetryOnly IntegrationMode = "telemetry_only"
)

// IntegrationModes lists every integration mode.
var IntegrationModes = []IntegrationMode{ModeManualSkill, ModeLauncherWrapper, ModeNativeHook, ModeReferenceAdapter, ModeTelemetryOnly}

// Valid reports whether m is a known integration mode.
func (m IntegrationMode) Valid() bool { return slices.Contains(IntegrationModes, m) }

// UnmarshalText accepts only known integration modes.
func (m *IntegrationMode) UnmarshalText(b []byte) error {
	return parseEnum(m, "integration mode", IntegrationModes, b)
}

// AdapterRole is the single role an adapter manifest claims.
type AdapterRole string

// Adapter roles.
const (
	RolePrimaryWorker AdapterRole = "primary_worker"
	RoleWorker        AdapterRole = "worker"
	RoleSupervisor    AdapterRole = "supervisor"
	RoleObserver      AdapterRole = "observer"
)

// AdapterRoles lists every adapter role.
var AdapterRoles = []AdapterRole{RolePrimaryWorker, RoleWorker, RoleSupervisor, RoleObserver}

// Valid reports whether r is a known adapter role.
func (r AdapterRole) Valid() bool { return slices.Contains(AdapterRoles, r) }

// UnmarshalText accepts only known adapter roles.
func (r *AdapterRole) UnmarshalText(b []byte) error {
	return parseEnum(r, "adapter role", AdapterRoles, b)
}

// ReceiptStatus is the status of a lifecycle receipt or callback response.
type ReceiptStatus string

// Receipt statuses.
const (
	StatusObserved  ReceiptStatus = "observed"
	StatusDelivered ReceiptStatus = "delivered"
	StatusSkipped   ReceiptStatus = "skipped"
	StatusDegraded  ReceiptStatus = "degraded"
	StatusFailed    ReceiptStatus = "failed"
)

// ReceiptStatuses lists every receipt status.
var ReceiptStatuses = []ReceiptStatus{StatusObserved, StatusDelivered, StatusSkipped, StatusDegraded, StatusFailed}

// Valid reports whether s is a known receipt status.
func (s ReceiptStatus) Valid() bool { return slices.Contains(ReceiptStatuses, s) }

// UnmarshalText accepts only known receipt statuses.
func (s *ReceiptStatus) UnmarshalText(b []byte) error {
	return parseEnum(s, "receipt status", ReceiptStatuses, b)
}

// PlacementOutcome is what happened to one payload: the status of a
// PayloadReceipt.
type PlacementOutcome string

// Placement outcomes.
const (
	PlacementOutcomeDelivered PlacementOutcome = "delivered"
	PlacementOutcomeSkipped   PlacementOutcome = "skipped"
	PlacementOutcomeDegraded  PlacementOutcome = "degraded"
	PlacementOutcomeFailed    PlacementOutcome = "failed"
)

// PlacementOutcomes lists every placement outcome.
var PlacementOutcomes = []PlacementOutcome{PlacementOutcomeDelivered, PlacementOutcomeSkipped, PlacementOutcomeDegraded, PlacementOutcomeFailed}

// Valid reports whether o is a known placement outcome.
func (o PlacementOutcome) Valid() bool { return slices.Contains(PlacementOutcomes, o) }

// UnmarshalText accepts only known placement outcomes.
func (o *PlacementOutcome) UnmarshalText(b []byte) error {
	return parseEnum(o, "placement outcome", PlacementOutcomes, b)
}

// PlacementClass is the payload routing vocabulary used on a payload's
// acceptable_placements. It is distinct from ManifestPlacementClass, the
// capability vocabulary of the manifest; see ManifestPlacementsFor.
type PlacementClass string

// Payload placement classes.
const (
	PlacementDeveloperEquivalentFrame PlacementClass = "developer_equivalent_frame"
	PlacementPrePromptFrame           PlacementClass = "pre_prompt_frame"
	PlacementSideChannelContext       PlacementClass = "side_channel_context"
	// PlacementReceiptOnly injects nothing; only correlation metadata is
	// recorded and the body is never kept.
	PlacementReceiptOnly PlacementClass = "receipt_only"
)

// PlacementClasses lists every payload placement class.
var PlacementClasses = []PlacementClass{PlacementDeveloperEquivalentFrame, PlacementPrePromptFrame, PlacementSideChannelContext, PlacementReceiptOnly}

// Valid reports whether p is a known payload placement class.
func (p PlacementClass) Valid() bool { return slices.Contains(PlacementClasses, p) }

// UnmarshalText accepts only known payload placement classes. A manifest
// placement class given instead is named as one, with the payload
// placements lifeloop routes to it.
func (p *PlacementClass) UnmarshalText(b []byte) error {
	err := parseEnum(p, "placement class", PlacementClasses, b)
	var ee *EnumError
	if errors.As(err, &ee) && ManifestPlacementClass(b).Valid() {
		ee.Hint = ManifestPlacementHint(ManifestPlacementClass(b))
	}
	return err
}

// ManifestPlacementHint says, for a person who gave manifest placement c
// where a payload placement belongs, which payload placements lifeloop
// routes to c (PlacementRoutes).
func ManifestPlacementHint(c ManifestPlacementClass) string {
	var via []string
	for _, pc := range PlacementClasses {
		for _, e := range []Event{EventSessionStarting, EventFrameOpening} {
			if slices.Contains(PlacementRoutes(e)[pc], c) && !slices.Contains(via, string(pc)) {
				via = append(via, string(pc))
			}
		}
	}
	h := fmt.Sprintf("%q is a manifest placement (where an adapter places a payload), and a payload asks for a payload placement", string(c))
	if len(via) > 0 {
		h += fmt.Sprintf(": %s is placed at %s", strings.Join(via, " or "), c)
	}
	return h
}

// ManifestPlacementClass is the trust-neutral lifecycle-timing vocabulary
// a manifest uses to declare where it accepts payload placement.
type ManifestPlacementClass string

// Manifest placement classes.
const (
	ManifestPreSession       ManifestPlacementClass = "pre_session"
	ManifestPreFrameLeading  ManifestPlacementClass = "pre_frame_leading"
	ManifestPreFrameTrailing ManifestPlacementClass = "pre_frame_trailing"
	ManifestToolResult       ManifestPlacementClass = "tool_result"
	ManifestManualOperator   ManifestPlacementClass = "manual_operator"
)

// ManifestPlacementClasses lists every manifest placement class.
var ManifestPlacementClasses = []ManifestPlacementClass{ManifestPreSession, ManifestPreFrameLeading, ManifestPreFrameTrailing, ManifestToolResult, ManifestManualOperator}

// Valid reports whether p is a known manifest placement class.
func (p ManifestPlacementClass) Valid() bool { return slices.Contains(ManifestPlacementClasses, p) }

// UnmarshalText accepts only known manifest placement classes.
func (p *ManifestPlacementClass) UnmarshalText(b []byte) error {
	return parseEnum(p, "manifest placement class", ManifestPlacementClasses, b)
}

// RequirementLevel is how strongly a client needs a capability or
// placement.
type RequirementLevel string

// Requirement levels.
const (
	// RequirementRequired: refuse before dispatch when unmet.
	RequirementRequired RequirementLevel = "required"
	// RequirementPreferred: proceed with a degraded receipt and a warning.
	RequirementPreferred RequirementLevel = "preferred"
	// RequirementOptional: may be omitted without warning.
	RequirementOptional RequirementLevel = "optional"
)

// RequirementLevels lists every requirement level.
var RequirementLevels = []RequirementLevel{RequirementRequired, RequirementPreferred, RequirementOptional}

// Valid reports whether l is a known requirement level.
func (l RequirementLevel) Valid() bool { return slices.Contains(RequirementLevels, l) }

// UnmarshalText accepts only known requirement levels.
func (l *RequirementLevel) UnmarshalText(b []byte) error {
	return parseEnum(l, "requirement level", RequirementLevels, b)
}

// NegotiationOutcome is the result of negotiating one capability.
type NegotiationOutcome string

// Negotiation outcomes.
const (
	OutcomeSatisfied        NegotiationOutcome = "satisfied"
	OutcomeDegraded         NegotiationOutcome = "degraded"
	OutcomeUnsupported      NegotiationOutcome = "unsupported"
	OutcomeRequiresOperator NegotiationOutcome = "requires_operator"
)

// NegotiationOutcomes lists every negotiation outcome.
var NegotiationOutcomes = []NegotiationOutcome{OutcomeSatisfied, OutcomeDegraded, OutcomeUnsupported, OutcomeRequiresOperator}

// Valid reports whether o is a known negotiation outcome.
func (o NegotiationOutcome) Valid() bool { return slices.Contains(NegotiationOutcomes, o) }

// UnmarshalText accepts only known negotiation outcomes.
func (o *NegotiationOutcome) UnmarshalText(b []byte) error {
	return parseEnum(o, "negotiation outcome", NegotiationOutcomes, b)
}

// FrameClass says whether a frame is top-level or nested under a parent.
type FrameClass string

// Frame classes.
const (
	FrameTopLevel FrameClass = "top_level"
	FrameSubcall  FrameClass = "subcall"
)

// FrameClasses lists every frame class.
var FrameClasses = []FrameClass{FrameTopLevel, FrameSubcall}

// Valid reports whether c is a known frame class.
func (c FrameClass) Valid() bool { return slices.Contains(FrameClasses, c) }

// UnmarshalText accepts only known frame classes.
func (c *FrameClass) UnmarshalText(b []byte) error {
	return parseEnum(c, "frame class", FrameClasses, b)
}

// FailureClass is a lifecycle failure classification owned by Lifeloop.
type FailureClass string

// Failure classes.
const (
	FailureAdapterUnavailable    FailureClass = "adapter_unavailable"
	FailureCapabilityUnsupported FailureClass = "capability_unsupported"
	FailureCapabilityDegraded    FailureClass = "capability_degraded"
	FailurePlacementUnavailable  FailureClass = "placement_unavailable"
	FailurePayloadTooLarge       FailureClass = "payload_too_large"
	FailurePayloadRejected       FailureClass = "payload_rejected"
	FailureIdentityUnavailable   FailureClass = "identity_unavailable"
	FailureTransportError        FailureClass = "transport_error"
	FailureTimeout               FailureClass = "timeout"
	FailureOperatorRequired      FailureClass = "operator_required"
	FailureStateConflict         FailureClass = "state_conflict"
	FailureInvalidRequest        FailureClass = "invalid_request"
	FailureInternalError         FailureClass = "internal_error"
)

// FailureClasses lists every failure class in contract order.
var FailureClasses = []FailureClass{
	FailureAdapterUnavailable, FailureCapabilityUnsupported, FailureCapabilityDegraded,
	FailurePlacementUnavailable, FailurePayloadTooLarge, FailurePayloadRejected,
	FailureIdentityUnavailable, FailureTransportError, FailureTimeout,
	FailureOperatorRequired, FailureStateConflict, FailureInvalidRequest, FailureInternalError,
}

// Valid reports whether f is a known failure class.
func (f FailureClass) Valid() bool { return slices.Contains(FailureClasses, f) }

// UnmarshalText accepts only known failure classes.
func (f *FailureClass) UnmarshalText(b []byte) error {
	return parseEnum(f, "failure class", FailureClasses, b)
}

// DefaultRetry is the contract's default retry posture for f. Adapters may
// tighten it but must not loosen it. An unknown class maps to RetryDoNot.
func (f FailureClass) DefaultRetry() RetryClass {
	switch f {
	case FailureAdapterUnavailable, FailurePlacementUnavailable, FailurePayloadRejected, FailureIdentityUnavailable:
		return RetryAfterReconfigure
	case FailureCapabilityUnsupported, FailurePayloadTooLarge, FailureInvalidRequest:
		return RetryDoNot
	case FailureCapabilityDegraded, FailureStateConflict, FailureInternalError:
		return RetryAfterReread
	case FailureTransportError, FailureTimeout:
		return RetrySafe
	case FailureOperatorRequired:
		return RetryAfterOperator
	default:
		return RetryDoNot
	}
}

// RetryClass is the retry posture that accompanies a failure.
type RetryClass string

// Retry classes.
const (
	RetrySafe             RetryClass = "safe_retry"
	RetryAfterReread      RetryClass = "retry_after_reread"
	RetryAfterReconfigure RetryClass = "retry_after_reconfigure"
	RetryAfterOperator    RetryClass = "retry_after_operator"
	RetryDoNot            RetryClass = "do_not_retry"
)

// RetryClasses lists every retry class.
var RetryClasses = []RetryClass{RetrySafe, RetryAfterReread, RetryAfterReconfigure, RetryAfterOperator, RetryDoNot}

// Valid reports whether r is a known retry class.
func (r RetryClass) Valid() bool { return slices.Contains(RetryClasses, r) }

// UnmarshalText accepts only known retry classes.
func (r *RetryClass) UnmarshalText(b []byte) error {
	return parseEnum(r, "retry class", RetryClasses, b)
}

// EnumError reports a string that is not one of an enum's values.
type EnumError struct {
	Kind    string   // e.g. "event", "support state"
	Value   string   // the rejected value
	Allowed []string // every accepted value
	// Hint, when set, follows the message: e.g. that the value belongs
	// to the other placement vocabulary.
	Hint string
}

func (e *EnumError) Error() string {
	msg := fmt.Sprintf("unknown %s %q; allowed: %s", e.Kind, e.Value, strings.Join(e.Allowed, ", "))
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

func parseEnum[T ~string](dst *T, kind string, all []T, b []byte) error {
	v := T(b)
	if !slices.Contains(all, v) {
		allowed := make([]string, len(all))
		for i, a := range all {
			allowed[i] = string(a)
		}
		return &EnumError{Kind: kind, Value: string(b), Allowed: allowed}
	}
	*dst = v
	return nil
}

package contract

import (
	"fmt"
	"slices"
	"strings"
)

// Requirement is how strongly a client needs one capability.
//
// JSON: {"level": "required", "min_support": "native", "accept_partial": true}.
// MinSupport may be "native" or "synthesized" and defaults to
// "synthesized" (native or synthesized support satisfies). AcceptPartial
// lets partial support count as satisfied.
type Requirement struct {
	Level         RequirementLevel `json:"level"`
	MinSupport    *SupportState    `json:"min_support,omitempty"`
	AcceptPartial bool             `json:"accept_partial,omitempty"`
}

// SessionIdentityKeys are the keys accepted in
// CapabilityRequest.SessionIdentity.
var SessionIdentityKeys = []string{"harness_session_id", "harness_run_id", "harness_task_id"}

// RenewalKeys are the keys accepted in CapabilityRequest.Renewal.
var RenewalKeys = []string{
	"reset.native", "reset.wrapper_mediated", "reset.manual",
	"continuation.observation", "continuation.payload_delivery",
}

// CapabilityRequest declares what a client needs from an adapter before
// any dispatch. Capabilities that are not mentioned are not negotiated.
type CapabilityRequest struct {
	ClientID        string                                 `json:"client_id"`
	Events          map[Event]Requirement                  `json:"events,omitempty"`
	Placements      map[ManifestPlacementClass]Requirement `json:"placements,omitempty"`
	ContextPressure *Requirement                           `json:"context_pressure,omitempty"`
	ReceiptLedger   *Requirement                           `json:"receipt_ledger,omitempty"`
	// SessionIdentity is keyed by SessionIdentityKeys.
	SessionIdentity map[string]Requirement `json:"session_identity,omitempty"`
	// Renewal is keyed by RenewalKeys.
	Renewal map[string]Requirement `json:"renewal,omitempty"`
}

// Validate checks the requirement values and the map keys.
func (r Requirement) Validate() error {
	if err := enumOK("level", r.Level, RequirementLevels); err != nil {
		return err
	}
	if r.MinSupport != nil && *r.MinSupport != SupportNative && *r.MinSupport != SupportSynthesized {
		return invalid("min_support", "must be native or synthesized, got %q", *r.MinSupport)
	}
	return nil
}

// Validate checks the client id, every key and every requirement.
func (c CapabilityRequest) Validate() error {
	if err := nonEmpty("client_id", c.ClientID); err != nil {
		return err
	}
	for _, ev := range sortedKeys(c.Events) {
		f := "events." + string(ev)
		if err := firstErr(enumOK(f, ev, Events), within(f, c.Events[ev].Validate())); err != nil {
			return err
		}
	}
	for _, pc := range sortedKeys(c.Placements) {
		f := "placements." + string(pc)
		if err := firstErr(enumOK(f, pc, ManifestPlacementClasses), within(f, c.Placements[pc].Validate())); err != nil {
			return err
		}
	}
	if c.ContextPressure != nil {
		if err := within("context_pressure", c.ContextPressure.Validate()); err != nil {
			return err
		}
	}
	if c.ReceiptLedger != nil {
		if err := within("receipt_ledger", c.ReceiptLedger.Validate()); err != nil {
			return err
		}
	}
	for name, m := range map[string]struct {
		reqs    map[string]Requirement
		allowed []string
	}{"session_identity": {c.SessionIdentity, SessionIdentityKeys}, "renewal": {c.Renewal, RenewalKeys}} {
		for _, k := range sortedKeys(m.reqs) {
			f := name + "." + k
			if !slices.Contains(m.allowed, k) {
				return invalid(f, "unknown key; allowed: %s", strings.Join(m.allowed, ", "))
			}
			if err := within(f, m.reqs[k].Validate()); err != nil {
				return err
			}
		}
	}
	return nil
}

// CapabilityResult is the negotiation of one capability. Capability is the
// manifest path of the claim, e.g. "lifecycle_events.frame.opening",
// "placement.pre_session", "context_pressure", "receipts.receipt_ledger",
// "session_identity.harness_run_id", "renewal.reset.wrapper_mediated".
type CapabilityResult struct {
	Capability  string             `json:"capability"`
	Requirement Requirement        `json:"requirement"`
	Offered     SupportState       `json:"offered"`
	Outcome     NegotiationOutcome `json:"outcome"`
	Reason      string             `json:"reason"`
}

// Verdict says whether dispatch may proceed. When it may not,
// FailureClass is capability_unsupported or operator_required and
// RetryClass its default retry posture.
type Verdict struct {
	Proceed      bool          `json:"proceed"`
	FailureClass *FailureClass `json:"failure_class"`
	RetryClass   *RetryClass   `json:"retry_class"`
	Reasons      []string      `json:"reasons,omitempty"`
}

// NegotiationResult is the full outcome of Negotiate.
type NegotiationResult struct {
	AdapterID       string             `json:"adapter_id"`
	IntegrationMode IntegrationMode    `json:"integration_mode"`
	ClientID        string             `json:"client_id"`
	Capabilities    []CapabilityResult `json:"capabilities"`
	// Warnings holds one warning per preferred capability that is not
	// satisfied (code "capability_degraded" or "operator_required").
	Warnings []Warning `json:"warnings,omitempty"`
	Verdict  Verdict   `json:"verdict"`
}

// Negotiate evaluates req against manifest m for integration mode mode.
// It is pure and deterministic: results are ordered events (contract
// order), placements, context_pressure, receipt_ledger, session identity,
// renewal.
//
// Outcome of one capability, from the offered support:
//   - native or synthesized: satisfied, unless MinSupport is native and
//     the offer is synthesized (degraded);
//   - partial: satisfied if AcceptPartial, else degraded;
//   - manual: requires_operator;
//   - unavailable, or no claim: unsupported.
//
// An event claim only counts when its modes include mode; placements
// other than manual_operator count as unavailable in telemetry_only mode.
//
// Effect of the requirement level on a capability that is not satisfied:
//   - required: dispatch is refused. The failure class is
//     operator_required when every refusing capability requires an
//     operator, else capability_unsupported;
//   - preferred: dispatch proceeds and a warning is added;
//   - optional: dispatch proceeds without a warning, and an unsupported
//     optional capability is left out of Capabilities altogether.
//
// A mode that is not among the manifest's integration_modes refuses
// dispatch with capability_unsupported.
func Negotiate(m AdapterManifest, mode IntegrationMode, req CapabilityRequest) NegotiationResult {
	res := NegotiationResult{AdapterID: m.AdapterID, IntegrationMode: mode, ClientID: req.ClientID, Capabilities: []CapabilityResult{}}
	var refusedUnsupported, refusedOperator []string

	add := func(capability string, r Requirement, offered SupportState, why string) {
		out, reason := outcomeFor(offered, r)
		if why != "" {
			reason = why
		}
		if out == OutcomeUnsupported && r.Level == RequirementOptional {
			return
		}
		res.Capabilities = append(res.Capabilities, CapabilityResult{
			Capability: capability, Requirement: r, Offered: offered, Outcome: out, Reason: reason,
		})
		if out == OutcomeSatisfied {
			return
		}
		line := capability + ": " + reason
		switch r.Level {
		case RequirementRequired:
			if out == OutcomeRequiresOperator {
				refusedOperator = append(refusedOperator, line)
			} else {
				refusedUnsupported = append(refusedUnsupported, line)
			}
		case RequirementPreferred:
			code := string(FailureCapabilityDegraded)
			if out == OutcomeRequiresOperator {
				code = string(FailureOperatorRequired)
			}
			res.Warnings = append(res.Warnings, Warning{Code: code, Message: reason, Capability: Ptr(capability)})
		}
	}

	for _, ev := range Events {
		r, ok := req.Events[ev]
		if !ok {
			continue
		}
		offered, why := SupportUnavailable, "no claim in the manifest"
		if es, claimed := m.LifecycleEvents[ev]; claimed {
			offered, why = es.Support, ""
			if es.Support != SupportUnavailable && !slices.Contains(es.Modes, mode) {
				offered, why = SupportUnavailable, fmt.Sprintf("claimed as %s only through %s, not %s", es.Support, joinModes(es.Modes), mode)
			}
		}
		add("lifecycle_events."+string(ev), r, offered, why)
	}
	for _, pc := range ManifestPlacementClasses {
		r, ok := req.Placements[pc]
		if !ok {
			continue
		}
		offered, why := SupportUnavailable, "no claim in the manifest"
		if ps, claimed := m.Placement[pc]; claimed {
			offered, why = ps.Support, ""
		}
		if mode == ModeTelemetryOnly && pc != ManifestManualOperator && offered != SupportUnavailable {
			offered, why = SupportUnavailable, "telemetry_only integrations cannot inject payloads"
		}
		add("placement."+string(pc), r, offered, why)
	}
	if req.ContextPressure != nil {
		add("context_pressure", *req.ContextPressure, m.ContextPressure.Support, "")
	}
	if req.ReceiptLedger != nil {
		add("receipts.receipt_ledger", *req.ReceiptLedger, m.Receipts.ReceiptLedger, "")
	}
	for _, k := range SessionIdentityKeys {
		r, ok := req.SessionIdentity[k]
		if !ok {
			continue
		}
		offered, why := SupportUnavailable, "the manifest declares no session_identity"
		if si := m.SessionIdentity; si != nil {
			why = ""
			switch k {
			case "harness_session_id":
				offered = si.HarnessSessionID
			case "harness_run_id":
				offered = si.HarnessRunID
			default:
				offered = si.HarnessTaskID
			}
		}
		add("session_identity."+k, r, offered, why)
	}
	for _, k := range RenewalKeys {
		r, ok := req.Renewal[k]
		if !ok {
			continue
		}
		offered, why := SupportUnavailable, "the manifest declares no renewal capability"
		if rn := m.Renewal; rn != nil {
			why = ""
			switch k {
			case "reset.native":
				offered = rn.Reset.Native
			case "reset.wrapper_mediated":
				offered = rn.Reset.WrapperMediated
			case "reset.manual":
				offered = rn.Reset.Manual
			case "continuation.observation":
				offered = rn.Continuation.Observation
			default:
				offered = rn.Continuation.PayloadDelivery
			}
		}
		add("renewal."+k, r, offered, why)
	}

	if !slices.Contains(m.IntegrationModes, mode) {
		refusedUnsupported = append([]string{fmt.Sprintf("adapter %q does not support integration mode %q (it supports %s)", m.AdapterID, mode, joinModes(m.IntegrationModes))}, refusedUnsupported...)
	}
	switch {
	case len(refusedUnsupported) > 0:
		res.Verdict = refuse(FailureCapabilityUnsupported, append(refusedUnsupported, refusedOperator...))
	case len(refusedOperator) > 0:
		res.Verdict = refuse(FailureOperatorRequired, refusedOperator)
	default:
		res.Verdict = Verdict{Proceed: true}
		for _, w := range res.Warnings {
			res.Verdict.Reasons = append(res.Verdict.Reasons, *w.Capability+": "+w.Message)
		}
	}
	return res
}

func refuse(fc FailureClass, reasons []string) Verdict {
	return Verdict{Proceed: false, FailureClass: Ptr(fc), RetryClass: Ptr(fc.DefaultRetry()), Reasons: reasons}
}

func joinModes(modes []IntegrationMode) string {
	if len(modes) == 0 {
		return "no mode"
	}
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

func outcomeFor(offered SupportState, r Requirement) (NegotiationOutcome, string) {
	switch offered {
	case SupportNative:
		return OutcomeSatisfied, "native support"
	case SupportSynthesized:
		if r.MinSupport != nil && *r.MinSupport == SupportNative {
			return OutcomeDegraded, "synthesized support is weaker than the requested native support"
		}
		return OutcomeSatisfied, "synthesized support"
	case SupportPartial:
		if r.AcceptPartial {
			return OutcomeSatisfied, "partial support, accepted by the client"
		}
		return OutcomeDegraded, "partial support; set accept_partial to accept it"
	case SupportManual:
		return OutcomeRequiresOperator, "manual support: an operator must act"
	default:
		return OutcomeUnsupported, "unavailable"
	}
}

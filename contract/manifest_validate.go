package contract

import (
	"slices"
)

// injectingPlacements are the manifest placements that put a payload into
// the harness's context; a telemetry_only adapter cannot offer them.
var injectingPlacements = []ManifestPlacementClass{ManifestPreSession, ManifestPreFrameLeading, ManifestPreFrameTrailing, ManifestToolResult}

// Validate checks the manifest rules: contract version, non-empty
// identifiers, a known role, a non-empty list of distinct integration
// modes, event claims whose modes are declared integration modes (and
// non-empty unless the event is unavailable), positive max_bytes, known
// support states everywhere, and that an adapter whose only mode is
// telemetry_only claims no payload-injecting placement.
func (m AdapterManifest) Validate() error {
	if err := firstErr(
		schemaVersionOK("contract_version", m.ContractVersion),
		nonEmpty("adapter_id", m.AdapterID),
		nonEmpty("adapter_version", m.AdapterVersion),
		nonEmpty("display_name", m.DisplayName),
		enumOK("role", m.Role, AdapterRoles),
	); err != nil {
		return err
	}
	if len(m.IntegrationModes) == 0 {
		return invalid("integration_modes", "must declare at least one integration mode")
	}
	for i, mode := range m.IntegrationModes {
		f := indexed("integration_modes", i)
		if err := enumOK(f, mode, IntegrationModes); err != nil {
			return err
		}
		if slices.Index(m.IntegrationModes, mode) != i {
			return invalid(f, "duplicate integration mode %q", mode)
		}
	}
	if m.LifecycleEvents == nil {
		return invalid("lifecycle_events", "must be an object (it may be empty)")
	}
	for _, ev := range sortedKeys(m.LifecycleEvents) {
		f := "lifecycle_events." + string(ev)
		es := m.LifecycleEvents[ev]
		if err := firstErr(enumOK(f, ev, Events), enumOK(f+".support", es.Support, SupportStates)); err != nil {
			return err
		}
		if es.Support != SupportUnavailable && len(es.Modes) == 0 {
			return invalid(f+".modes", "a %s claim must name the integration modes that deliver it", es.Support)
		}
		for i, mode := range es.Modes {
			mf := indexed(f+".modes", i)
			if err := enumOK(mf, mode, IntegrationModes); err != nil {
				return err
			}
			if !slices.Contains(m.IntegrationModes, mode) {
				return invalid(mf, "mode %q is not one of the manifest's integration_modes", mode)
			}
		}
	}
	if m.Placement == nil {
		return invalid("placement", "must be an object (it may be empty)")
	}
	telemetryOnly := len(m.IntegrationModes) == 1 && m.IntegrationModes[0] == ModeTelemetryOnly
	for _, pc := range sortedKeys(m.Placement) {
		f := "placement." + string(pc)
		ps := m.Placement[pc]
		if err := firstErr(enumOK(f, pc, ManifestPlacementClasses), enumOK(f+".support", ps.Support, SupportStates)); err != nil {
			return err
		}
		if ps.MaxBytes != nil && *ps.MaxBytes <= 0 {
			return invalid(f+".max_bytes", "must be positive when present")
		}
		if telemetryOnly && ps.Support != SupportUnavailable && slices.Contains(injectingPlacements, pc) {
			return invalid(f+".support", "a telemetry_only adapter cannot inject payloads; %s must be unavailable", pc)
		}
	}
	if err := firstErr(
		enumOK("context_pressure.support", m.ContextPressure.Support, SupportStates),
		nonEmptyPtr("context_pressure.evidence", m.ContextPressure.Evidence),
		enumOK("receipts.receipt_ledger", m.Receipts.ReceiptLedger, SupportStates),
	); err != nil {
		return err
	}
	if si := m.SessionIdentity; si != nil {
		if err := firstErr(
			enumOK("session_identity.harness_session_id", si.HarnessSessionID, SupportStates),
			enumOK("session_identity.harness_run_id", si.HarnessRunID, SupportStates),
			enumOK("session_identity.harness_task_id", si.HarnessTaskID, SupportStates),
		); err != nil {
			return err
		}
	}
	if m.SessionRename != nil {
		if err := enumOK("session_rename.support", m.SessionRename.Support, SupportStates); err != nil {
			return err
		}
	}
	if m.ApprovalSurface != nil {
		if err := enumOK("approval_surface.support", m.ApprovalSurface.Support, SupportStates); err != nil {
			return err
		}
	}
	if r := m.Renewal; r != nil {
		if err := firstErr(
			enumOK("renewal.reset.native", r.Reset.Native, SupportStates),
			enumOK("renewal.reset.wrapper_mediated", r.Reset.WrapperMediated, SupportStates),
			enumOK("renewal.reset.manual", r.Reset.Manual, SupportStates),
			enumOK("renewal.continuation.observation", r.Continuation.Observation, SupportStates),
			enumOK("renewal.continuation.payload_delivery", r.Continuation.PayloadDelivery, SupportStates),
			nonEmptyPtr("renewal.evidence", r.Evidence),
		); err != nil {
			return err
		}
		for i, p := range r.Profiles {
			if err := nonEmpty(indexed("renewal.profiles", i), p); err != nil {
				return err
			}
		}
	}
	for i, fc := range m.FailureModes {
		if err := enumOK(indexed("failure_modes", i), fc, FailureClasses); err != nil {
			return err
		}
	}
	for i, ts := range m.TelemetrySources {
		f := indexed("telemetry_sources", i)
		if err := firstErr(nonEmpty(f+".source", ts.Source), enumOK(f+".support", ts.Support, SupportStates)); err != nil {
			return err
		}
	}
	for i, kd := range m.KnownDegradations {
		f := indexed("known_degradations", i)
		if err := firstErr(
			nonEmpty(f+".capability", kd.Capability),
			enumOK(f+".previous_support", kd.PreviousSupport, SupportStates),
			enumOK(f+".current_support", kd.CurrentSupport, SupportStates),
			nonEmptyPtr(f+".evidence", kd.Evidence),
		); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

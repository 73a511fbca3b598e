package adapters

import (
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
)

// AdapterVersion is the version of lifeloop's adapter implementations,
// independent of the contract version.
const AdapterVersion = "0.1.0"

// NotImplemented is the evidence text of claims lifeloop cannot yet back
// with a test.
const NotImplemented = "not yet implemented in lifeloop"

// WrapperManifest is the starting manifest every adapter shares: it says
// what lifeloop itself provides when it launches the harness, and claims
// nothing that a test does not prove.
//
// Integration modes: launcher_wrapper (`lifeloop run` wraps any command)
// and manual_skill (`lifeloop emit` reports a moment by hand).
//
// What `lifeloop run` proves for any command, because it is process
// supervision rather than harness knowledge (see wrapperEvidence):
// session.starting/started/ending/ended and supervisor.tick are native in
// launcher_wrapper mode, receipts are synthesized by lifeloop, and the
// per-session receipt ledger is provided by lifeloop (synthesized). Every
// other claim is `unavailable` until a test proves it. A harness raises a
// claim in its own Manifest and adds the proving test's name to its
// Evidence in the same change; TestManifestClaimsHaveEvidence fails
// otherwise.
func WrapperManifest(id, name string, role contract.AdapterRole) contract.AdapterManifest {
	events := make(map[contract.Event]contract.EventSupport, len(contract.Events))
	for _, e := range contract.Events {
		events[e] = contract.EventSupport{Support: contract.SupportUnavailable}
	}
	for _, e := range wrapperEvents {
		events[e] = contract.EventSupport{Support: contract.SupportNative, Modes: []contract.IntegrationMode{contract.ModeLauncherWrapper}}
	}
	placement := make(map[contract.ManifestPlacementClass]contract.PlacementSupport, len(contract.ManifestPlacementClasses))
	for _, p := range contract.ManifestPlacementClasses {
		placement[p] = contract.PlacementSupport{Support: contract.SupportUnavailable}
	}
	return contract.AdapterManifest{
		ContractVersion:  contract.Version,
		AdapterID:        id,
		AdapterVersion:   AdapterVersion,
		DisplayName:      name,
		Role:             role,
		IntegrationModes: []contract.IntegrationMode{contract.ModeLauncherWrapper, contract.ModeManualSkill},
		LifecycleEvents:  events,
		Placement:        placement,
		ContextPressure: contract.ContextPressureSupport{
			Support:  contract.SupportUnavailable,
			Evidence: contract.Ptr(NotImplemented),
		},
		Receipts: contract.ReceiptsSupport{
			Native:              false,
			LifeloopSynthesized: true,
			ReceiptLedger:       contract.SupportSynthesized,
		},
		SessionIdentity: &contract.SessionIdentitySupport{
			HarnessSessionID: contract.SupportUnavailable,
			HarnessRunID:     contract.SupportUnavailable,
			HarnessTaskID:    contract.SupportUnavailable,
		},
		Renewal: &contract.RenewalSupport{
			Reset: contract.RenewalReset{
				Native:          contract.SupportUnavailable,
				WrapperMediated: contract.SupportUnavailable,
				Manual:          contract.SupportUnavailable,
			},
			Continuation: contract.RenewalContinuation{
				Observation:     contract.SupportUnavailable,
				PayloadDelivery: contract.SupportUnavailable,
			},
			Evidence: contract.Ptr(NotImplemented),
		},
	}
}

// wrapperEvents are the events `lifeloop run` observes from process
// control for any command.
var wrapperEvents = []contract.Event{
	contract.EventSessionStarting, contract.EventSessionStarted,
	contract.EventSessionEnding, contract.EventSessionEnded,
	contract.EventSupervisorTick,
}

// WrapperEvidence names the tests that prove the claims wrapperManifest
// raises for every adapter: the supervisor's tests with a scripted
// harness, the router's receipt synthesis and the ledger's durability.
// A harness with end-to-end tests against its real binary overrides the
// session claims with them.
func WrapperEvidence() map[string]string {
	return map[string]string{
		"lifecycle_events.session.starting/launcher_wrapper": "TestExitCodePassthrough",
		"lifecycle_events.session.started/launcher_wrapper":  "TestExitCodePassthrough",
		"lifecycle_events.session.ending/launcher_wrapper":   "TestAbortOverControlSocket",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestSignalDeathReadFromStatus",
		"lifecycle_events.supervisor.tick/launcher_wrapper":  "TestTicksReportActivity",
		"receipts.lifeloop_synthesized":                      "TestReceiptSynthesis",
		"receipts.receipt_ledger":                            "TestConcurrentProcesses",
	}
}

// WithEvidence returns wrapperEvidence with extra entries on top.
func WithEvidence(extra map[string]string) map[string]string {
	ev := WrapperEvidence()
	for k, v := range extra {
		ev[k] = v
	}
	return ev
}

// Claims flattens a manifest's capability claims into the keys used by
// Adapter.Evidence, each with its support state:
//
//	lifecycle_events.<event>/<mode>  (one key per mode; <event> alone when no mode is listed)
//	placement.<class>
//	context_pressure
//	receipts.native, receipts.lifeloop_synthesized (native/synthesized when true), receipts.receipt_ledger
//	session_identity.harness_session_id|harness_run_id|harness_task_id
//	session_rename, approval_surface
//	renewal.reset.native|wrapper_mediated|manual, renewal.continuation.observation|payload_delivery
//	telemetry_sources.<source>
func Claims(m contract.AdapterManifest) map[string]contract.SupportState {
	c := map[string]contract.SupportState{}
	for e, s := range m.LifecycleEvents {
		if len(s.Modes) == 0 {
			c["lifecycle_events."+string(e)] = s.Support
		}
		for _, mode := range s.Modes {
			c["lifecycle_events."+string(e)+"/"+string(mode)] = s.Support
		}
	}
	for p, s := range m.Placement {
		c["placement."+string(p)] = s.Support
	}
	c["context_pressure"] = m.ContextPressure.Support
	c["receipts.native"] = boolClaim(m.Receipts.Native, contract.SupportNative)
	c["receipts.lifeloop_synthesized"] = boolClaim(m.Receipts.LifeloopSynthesized, contract.SupportSynthesized)
	c["receipts.receipt_ledger"] = m.Receipts.ReceiptLedger
	if si := m.SessionIdentity; si != nil {
		c["session_identity.harness_session_id"] = si.HarnessSessionID
		c["session_identity.harness_run_id"] = si.HarnessRunID
		c["session_identity.harness_task_id"] = si.HarnessTaskID
	}
	if m.SessionRename != nil {
		c["session_rename"] = m.SessionRename.Support
	}
	if m.ApprovalSurface != nil {
		c["approval_surface"] = m.ApprovalSurface.Support
	}
	if r := m.Renewal; r != nil {
		c["renewal.reset.native"] = r.Reset.Native
		c["renewal.reset.wrapper_mediated"] = r.Reset.WrapperMediated
		c["renewal.reset.manual"] = r.Reset.Manual
		c["renewal.continuation.observation"] = r.Continuation.Observation
		c["renewal.continuation.payload_delivery"] = r.Continuation.PayloadDelivery
	}
	for _, t := range m.TelemetrySources {
		c["telemetry_sources."+strings.TrimSpace(t.Source)] = t.Support
	}
	return c
}

func boolClaim(b bool, s contract.SupportState) contract.SupportState {
	if b {
		return s
	}
	return contract.SupportUnavailable
}

// Raise adds mode to event's claim at support. A claim has one support
// state for all its modes, so when the event is already claimed in another
// mode the weaker of the two states is kept: a claim never says more than
// every one of its modes proves.
func Raise(m contract.AdapterManifest, event contract.Event, support contract.SupportState, mode contract.IntegrationMode) {
	cur := m.LifecycleEvents[event]
	if cur.Support == contract.SupportUnavailable || cur.Support == "" {
		m.LifecycleEvents[event] = contract.EventSupport{Support: support, Modes: []contract.IntegrationMode{mode}}
		return
	}
	if strength(support) < strength(cur.Support) {
		cur.Support = support
	}
	if !slices.Contains(cur.Modes, mode) {
		cur.Modes = append(slices.Clone(cur.Modes), mode)
	}
	m.LifecycleEvents[event] = cur
}

// RaiseTelemetry raises the claims `lifeloop run` proves from a
// harness's own session file (internal/observe): pressure
// level changes and compactions (synthesized from the file's usage and
// compaction records), the harness session id (synthesized: read from the
// file and set on every receipt), capability.degraded (native: lifeloop's
// own watcher reports the file lost and back), and the file itself as a
// telemetry source. Frame events are raised by each adapter, since some
// are native through the hook bridge.
//
// telemetry_only (`lifeloop watch`) is declared by RaiseWatch only for events already
// synthesized in every mode: a manifest holds one support state per event
// across its modes, so adding telemetry_only to session.started/ended or
// to a hook-bridge frame event would lower its native claim for every
// mode. watch records those too; the manifest under-claims them.
func RaiseTelemetry(m *contract.AdapterManifest, source, evidence string) {
	Raise(*m, contract.EventContextPressureObserved, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	Raise(*m, contract.EventContextCompacted, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	Raise(*m, contract.EventCapabilityDegraded, contract.SupportNative, contract.ModeLauncherWrapper)
	m.ContextPressure = contract.ContextPressureSupport{Support: contract.SupportSynthesized, Evidence: contract.Ptr(evidence)}
	m.SessionIdentity.HarnessSessionID = contract.SupportSynthesized
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: source, Support: contract.SupportNative})
}

// Usage claims: the telemetry sources a manifest names for what `lifeloop
// run` reads of a harness's model calls (docs/usage.md).
const (
	// UsageTokensSource is the tokens of each model call, read from the
	// harness's own records (files or database): native.
	UsageTokensSource = "usage.tokens"
	// UsageCostSource is the calls' cost: native where the harness
	// records each call's cost itself, synthesized where lifeloop prices
	// the tokens with its price table (the cost then says estimated).
	UsageCostSource = "usage.cost"
)

// RaiseUsage claims the usage telemetry sources for a harness whose
// records `lifeloop run` reads usage from (adapters.UsageReader or
// UsageStore): the tokens native, the cost native when the harness
// prices its calls itself (nativeCost), else synthesized. Its evidence
// is the end-to-end test that checks the harness's tokens and cost with
// their provenance in the ledger, the views and the backends.
func RaiseUsage(m *contract.AdapterManifest, nativeCost bool) {
	cost := contract.SupportSynthesized
	if nativeCost {
		cost = contract.SupportNative
	}
	m.TelemetrySources = append(m.TelemetrySources,
		contract.TelemetrySource{Source: UsageTokensSource, Support: contract.SupportNative},
		contract.TelemetrySource{Source: UsageCostSource, Support: cost})
}

// RaiseWatch declares telemetry_only (`lifeloop watch`) for events, each
// already synthesized, and context pressure from the same file. An event
// claimed native in another mode keeps its claim without telemetry_only:
// declaring it would lower the claim for every mode.
func RaiseWatch(m *contract.AdapterManifest, events ...contract.Event) {
	AddMode(m, contract.ModeTelemetryOnly)
	for _, e := range events {
		if m.LifecycleEvents[e].Support == contract.SupportNative {
			continue
		}
		Raise(*m, e, contract.SupportSynthesized, contract.ModeTelemetryOnly)
	}
}

// strength orders support states from unavailable (0) to native (4).
func strength(s contract.SupportState) int {
	switch s {
	case contract.SupportNative:
		return 4
	case contract.SupportSynthesized:
		return 3
	case contract.SupportPartial:
		return 2
	case contract.SupportManual:
		return 1
	}
	return 0
}

// AddMode adds an integration mode to the manifest once.
func AddMode(m *contract.AdapterManifest, mode contract.IntegrationMode) {
	if !slices.Contains(m.IntegrationModes, mode) {
		m.IntegrationModes = append(m.IntegrationModes, mode)
	}
}

// PlacementMaxBytes bounds a payload lifeloop places through a hook's
// additional context or a launch flag.
const PlacementMaxBytes = 8192

// RaiseWrapperRenewal raises the claims `lifeloop renew` proves for a
// harness with a Relauncher and a LaunchPlacer: it stops the harness and
// starts it again on the same terminal with the continuation payload
// placed at launch.
func RaiseWrapperRenewal(m *contract.AdapterManifest) {
	m.Renewal.Reset.WrapperMediated = contract.SupportSynthesized
	m.Renewal.Continuation.Observation = contract.SupportSynthesized
	m.Renewal.Continuation.PayloadDelivery = contract.SupportSynthesized
	m.Renewal.Profiles = []string{"lifeloop-wrapper"}
	m.Renewal.Evidence = contract.Ptr("lifeloop run stops the harness (exit command, then signals) and relaunches it on the same terminal with the continuation payload placed at launch; proven against the real binary")
}

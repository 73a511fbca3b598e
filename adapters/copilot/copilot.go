// Package copilot is GitHub Copilot CLI (npm @github/copilot, binary
// `copilot`). It owns everything lifeloop knows about Copilot CLI: its
// manifest and the tests that prove it (copilot.go), its command line
// (args.go), a launch pinned to its own session and the relaunch
// (launch.go), a payload placed at launch (placement.go), its session
// files and their parser (telemetry.go, parser.go), its hooks under
// `lifeloop run` (hooks.go) and the tokens of its model calls (usage.go).
//
// Measured against the pinned 1.0.102 (harnesses/, offline against the
// loopback mock model: COPILOT_OFFLINE=true and a custom provider,
// COPILOT_PROVIDER_BASE_URL/_TYPE/_API_KEY with COPILOT_MODEL; no GitHub
// login):
//
//   - `node_modules/.bin/copilot` is a small Node loader that runs the
//     native binary (@github/copilot-<platform>) as a child; a signal to
//     the loader alone orphans it, so signals go to the process group
//     (lifeloop's do). The first run of a HOME extracts the bundle into
//     ~/.cache/copilot/pkg (about 235 MB).
//   - The session file is <COPILOT_HOME, else ~/.copilot>/session-state/
//     <uuid>/events.jsonl (0600, appended per event; see Parser); in the
//     TUI the folder appears at launch, the file at the first prompt.
//     `--session-id UUID` starts a new session with that id, so lifeloop
//     pins every launch that chooses none; `--resume=ID` continues one in
//     the same file (a session.resume record first).
//   - Usage is one session.usage_record per model call with the
//     provider's numbers and the model's prompt limit (maxPromptTokens:
//     936 000 for claude-sonnet-4.6; COPILOT_PROVIDER_MAX_PROMPT_TOKENS
//     overrides it); compaction is session.compaction_start/_complete.
//   - SIGTERM, SIGINT or SIGHUP end the TUI with exit 0 and its
//     session.shutdown record.
//
// Hooks under `lifeloop run` (hooks.go): a per-launch plugin folder
// (--plugin-dir) in the lifeloop session folder runs SessionStart, Stop
// and SessionEnd; Stop's frame is read from the session file. `lifeloop
// host apply` installs the same hooks for the person's own launches, in
// a file of lifeloop's own in Copilot's hooks folder (host.go).
// Attention: the permission dialog of a shell command, read on the screen
// (attention.go).
// Not done: a frame.opening from UserPromptSubmit (it runs before Copilot
// names the turn), attention from Copilot's hooks or files.
package copilot

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is GitHub Copilot CLI to the registry.
type Harness struct {
	// The hook and record sides of attention say nothing (attention.go).
	kit.ScreenAttention
}

var (
	_ adapters.Harness        = Harness{}
	_ adapters.SessionPinner  = Harness{}
	_ adapters.SessionResumer = Harness{}
	_ adapters.Relauncher     = Harness{}
	_ adapters.Telemetry      = Harness{}
	_ adapters.LaunchPlacer   = Harness{}

	_ adapters.PlacementExternalizer = Harness{}
	_ adapters.HookBridge            = Harness{}
	_ adapters.AttentionReader       = Harness{}
	_ adapters.HostInstaller         = Harness{}
)

// Describe implements adapters.Harness. Copilot CLI is not among
// OrgLoop's harness ids, so it projects as "other" with the adapter name
// kept.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "copilot", DisplayName: "GitHub Copilot CLI", Conformance: adapters.ConformanceV1, Aliases: []string{"copilot-cli"},
		Names: []string{"copilot", "@github/copilot"},
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"telemetry_sources.usage.tokens":                     "TestUsageEverywhere",
		"telemetry_sources.usage.cost":                       "TestUsageEverywhere",
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunCopilotPrompt",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunCopilotPrompt",
		"lifecycle_events.session.ending/launcher_wrapper":   "TestRunCopilotPrompt",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunCopilotPrompt",
		// From the session file (telemetry.go, parser.go).
		"lifecycle_events.frame.opening/launcher_wrapper": "TestRunCopilotPrompt",
		"lifecycle_events.frame.opened/launcher_wrapper":  "TestRunCopilotPrompt",
		// The hook bridge (hooks.go): Stop ends the file's frame natively.
		"lifecycle_events.frame.ending/launcher_wrapper":              "TestRunCopilotHooks",
		"lifecycle_events.frame.ended/launcher_wrapper":               "TestRunCopilotHooks",
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunCopilotPrompt",
		// lifeloop host apply (host.go): the hooks without lifeloop run.
		"lifecycle_events.session.started/native_hook":          "TestHostApplyCopilotHooks",
		"lifecycle_events.frame.ending/native_hook":             "TestHostApplyCopilotHooks",
		"lifecycle_events.frame.ended/native_hook":              "TestHostApplyCopilotHooks",
		"lifecycle_events.session.ending/native_hook":           "TestHostApplyCopilotHooks",
		"lifecycle_events.session.ended/native_hook":            "TestHostApplyCopilotHooks",
		"lifecycle_events.context.compacted/launcher_wrapper":   "TestRunCopilotTUI",
		"lifecycle_events.capability.degraded/launcher_wrapper": "TestTelemetryDegradation",
		"context_pressure":                    "TestRunCopilotPrompt",
		"session_identity.harness_session_id": "TestRunCopilotPrompt",
		"telemetry_sources.transcript":        "TestRunCopilotPrompt",
		// Launch placement and renewal (placement.go, launch.go).
		"placement.pre_session":                 "TestRenewCopilotTUI",
		"renewal.reset.wrapper_mediated":        "TestRenewCopilotTUI",
		"renewal.continuation.observation":      "TestRenewCopilotTUI",
		"renewal.continuation.payload_delivery": "TestRenewCopilotTUI",
		// Attention under `lifeloop run`: the permission dialog on the
		// screen (attention.go).
		"telemetry_sources.attention.screen": "TestAttentionCopilotPermission",
		// lifeloop watch.
		"lifecycle_events.frame.opening/telemetry_only":             "TestWatchCopilot",
		"lifecycle_events.frame.opened/telemetry_only":              "TestWatchCopilot",
		"lifecycle_events.frame.ending/telemetry_only":              "TestWatchCopilot",
		"lifecycle_events.frame.ended/telemetry_only":               "TestWatchCopilot",
		"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchCopilot",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("copilot", "GitHub Copilot CLI", contract.RolePrimaryWorker)
	// From the session file: a user.message opens a frame, the turn's
	// first assistant.turn_start opens it, the end of a model turn that
	// asked for no tool ends it; usage records, the session id,
	// compactions, degradation of the source.
	frames := []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded}
	for _, e := range frames {
		adapters.Raise(m, e, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	}
	// Under `lifeloop run` the hook bridge (a per-launch --plugin-dir)
	// reports a turn's end natively: Stop → frame.ending/frame.ended, in
	// the file's frame.
	for _, e := range bridgedFrameEvents {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeLauncherWrapper)
	}
	// Without lifeloop run, the hooks `lifeloop host apply` installs
	// report the session's start and end and each turn's end (native_hook,
	// host.go); a turn's opening is only in the session file.
	adapters.AddMode(&m, contract.ModeNativeHook)
	for _, e := range []contract.Event{contract.EventSessionStarted, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventSessionEnding, contract.EventSessionEnded} {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeNativeHook)
	}
	adapters.RaiseWatch(&m, append(frames, contract.EventContextPressureObserved)...)
	adapters.RaiseTelemetry(&m, string(SourceEvents), "lifeloop run follows the session file (~/.copilot/session-state/<id>/events.jsonl, or under $COPILOT_HOME): context in use = the prompt of the last model call (session.usage_record: inputTokens, which counts the cached tokens too), against the model's maxPromptTokens; receipts on level changes and compactions")
	// pre_session: an instructions file named in
	// COPILOT_CUSTOM_INSTRUCTIONS_DIRS at launch, also when a renewal
	// relaunches the TUI (resumed with --resume=ID, or fresh).
	m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	adapters.RaiseWrapperRenewal(&m)
	// Usage under `lifeloop run`: each call's tokens from the events file's
	// session.usage_record; its cost is not dollars, lifeloop prices the
	// tokens (TestUsageEverywhere: ledger, views and backends, priced and
	// unpriced).
	adapters.RaiseUsage(&m, false)
	// Attention under `lifeloop run`: the shell command's permission
	// dialog on the screen (needs_permission, matched on the output).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.screen", Support: contract.SupportSynthesized})
	return m
}

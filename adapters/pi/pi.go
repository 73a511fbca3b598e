// Package pi is the Pi coding agent (npm @mariozechner/pi-coding-agent,
// binary `pi`) and everything lifeloop knows about it: its manifest and
// evidence (pi.go), its command line (args.go), launch placement and
// relaunch (launch.go), its session files and their parser (telemetry.go),
// and the hook bridge, an extension loaded for one launch (hooks.go,
// bridge.ts).
//
// Measured against Pi 0.73.1, the pin until 2026-12-03 (1.6.0 since: its
// differences in docs/harnesses.md; offline against the
// loopback mock model through a custom anthropic-messages provider in
// ~/.pi/agent/models.json):
//
//   - Pi writes <agent dir>/sessions/--<cwd>--/<start>_<id>.jsonl (agent
//     dir: $PI_CODING_AGENT_DIR, else ~/.pi/agent; the folder is
//     $PI_CODING_AGENT_SESSION_DIR when set, or --session-dir). <cwd> loses
//     its leading / and has / \ : turned into -, <start> is the start time,
//     <id> the session's uuidv7. The file appears only once the first
//     assistant message has ended (the entries so far written together),
//     then every entry is appended as it is finalised.
//   - Lines: a {type:"session", version:3, id, timestamp, cwd} header,
//     model_change {provider, modelId}, thinking_level_change, and
//     {type:"message", id, parentId, timestamp, message:{role, ...}} with
//     role user, assistant (usage {input, output, cacheRead, cacheWrite,
//     totalTokens, cost}, stopReason stop|length|toolUse|error|aborted) or
//     toolResult; compaction {summary, firstKeptEntryId, tokensBefore,
//     details, fromHook} after Pi compacts (when the last reply's tokens
//     exceed the window minus compaction.reserveTokens, 16384 by default).
//   - The context window is not in the file: lifeloop reads the model's
//     contextWindow from models.json (128000 when a model there declares
//     none). Pi's built-in models (its own provider table) are not read, so
//     their sessions get frames and compactions but no pressure levels.
//   - --append-system-prompt TEXT|FILE reaches the model's system prompt in
//     -p and the TUI, new or resumed (--session ID); /quit ends the TUI
//     (exit 0); /exit is not a command.
//   - A launch cannot choose a new session's file or id (only `--session
//     PATH` creates one, and the command line does not know Pi's folders),
//     so the bridge extension (hooks.go) writes the path Pi will use into
//     the lifeloop session folder at session start and discovery follows
//     it. Without the extension (--no-hooks, lifeloop watch) discovery
//     takes the first unclaimed file born after the launch whose header
//     records its cwd, which can swap launches that overlap in one folder.
//   - Pi's extensions (--extension FILE, TypeScript run in Pi's process)
//     get its lifecycle events; a before_agent_start handler's message
//     reaches the model after the prompt and is kept in the session. Pi
//     sends no session_shutdown when a signal ends it.
//   - Pi exits 1 at launch, before any session, when an extension it was
//     given fails to load ("Failed to load extension": a path that is a
//     directory or missing, a module that throws, a factory that throws;
//     0.73.1 and 1.6.0). So the bridge file is read back before Pi is
//     given it, and a bridge that cannot be written or read is left out:
//     Pi starts without it, and one capability.degraded (hooks native →
//     unavailable) says why (TestRunPiBridgeUnreadable). The bridge's
//     factory catches what it throws.
//   - Pi sets its process title to "pi", which replaces its command line
//     in /proc once it runs; the placed payload still goes through a file.
//
// Not provided: native_hook mode (`lifeloop host apply`): Pi's hooks are
// extensions, installed as files in ~/.pi/agent/extensions, not entries of
// a settings file. Not verified against the real binary: a real
// provider's usage records, Pi's built-in model windows, failed calls and
// steering messages in the session file (parsed as its docs give them),
// branch summaries (/tree), --session-dir without the bridge.
package pi

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is Pi to the registry.
type Harness struct{}

var (
	_ adapters.Harness               = Harness{}
	_ adapters.LaunchPlacer          = Harness{}
	_ adapters.PlacementExternalizer = Harness{}
	_ adapters.Relauncher            = Harness{}
	_ adapters.Telemetry             = Harness{}
	_ adapters.HookBridge            = Harness{}
)

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "pi", DisplayName: "Pi", Conformance: adapters.ConformanceV1,
		Names:          []string{"pi", "pi-coding-agent", "@mariozechner/pi-coding-agent"},
		OrgLoopHarness: contract.HarnessPi,
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"telemetry_sources.usage.tokens":                     "TestUsageEverywhere",
		"telemetry_sources.usage.cost":                       "TestUsageEverywhere",
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunPiPrint",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunPiTUI",
		"lifecycle_events.session.ending/launcher_wrapper":   "TestRunPiTUISigint",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunPiTUISigint",
		"lifecycle_events.supervisor.tick/launcher_wrapper":  "TestRunPiTUI",
		// The hook bridge (hooks.go, bridge.ts).
		"lifecycle_events.frame.opening/launcher_wrapper": "TestRunPiHookBridge",
		"lifecycle_events.frame.opened/launcher_wrapper":  "TestRunPiHookBridge",
		"lifecycle_events.frame.ending/launcher_wrapper":  "TestRunPiHookBridge",
		"lifecycle_events.frame.ended/launcher_wrapper":   "TestRunPiHookBridge",
		"placement.pre_frame_leading":                     "TestRunPiHookBridge",
		// From the session file (telemetry.go).
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunPiTelemetry",
		"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunPiCompactionTelemetry",
		"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
		"context_pressure":                    "TestRunPiTelemetry",
		"session_identity.harness_session_id": "TestRunPiTelemetry",
		"telemetry_sources.transcript":        "TestRunPiTelemetry",
		// Attention: an assistant message that stopped on an error (AttentionRecord).
		"telemetry_sources.attention.transcript": "TestAttentionErrorPi",
		"placement.pre_session":                  "TestRunPiPayloadAtLaunch",
		"renewal.reset.wrapper_mediated":         "TestRenewPiTUIUnderLifeloop",
		"renewal.continuation.observation":       "TestRenewPiTUIUnderLifeloop",
		"renewal.continuation.payload_delivery":  "TestRenewPiTUIUnderLifeloop",
		// lifeloop watch.
		"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchPi",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("pi", "Pi", contract.RolePrimaryWorker)
	// Under `lifeloop run` the bridge extension (--extension FILE in the
	// session folder) reports turns natively: before_agent_start →
	// frame.opening, agent_start → frame.opened, agent_end →
	// frame.ending/ended. The session file reports the same frames with the
	// same ids (they wait for the hook) and is what `lifeloop watch` reads;
	// the watch claims stay at pressure so the frame claims stay native.
	for _, e := range bridgedFrameEvents {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeLauncherWrapper)
	}
	adapters.RaiseWatch(&m, contract.EventContextPressureObserved)
	// Attention under `lifeloop run`: the session file's assistant
	// messages (stopReason error: stopped_on_error).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.transcript", Support: contract.SupportNative})
	adapters.RaiseTelemetry(&m, string(telemetrySource), "lifeloop run follows Pi's session file (~/.pi/agent/sessions/--<cwd>--/<start>_<id>.jsonl): context in use = usage.totalTokens of each assistant message, against the model's contextWindow from ~/.pi/agent/models.json (Pi's built-in models: window unknown, no levels); receipts on level changes and compactions (tokensBefore; the size after is known only with the next reply)")
	// pre_session: --append-system-prompt FILE at launch, also when a
	// renewal relaunches Pi (resumed or fresh).
	m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	adapters.RaiseWrapperRenewal(&m)
	// pre_frame_leading: context the bridge extension's before_agent_start
	// returns, sent after the prompt as a message Pi keeps in the session.
	m.Placement[contract.ManifestPreFrameLeading] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	// Usage under `lifeloop run`: each call's tokens from the session file's
	// assistant messages, with the cost Pi priced them at
	// (TestUsageEverywhere: ledger, views and backends, priced and
	// unpriced).
	adapters.RaiseUsage(&m, true)
	return m
}

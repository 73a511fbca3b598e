// Package gemini is Google's Gemini CLI (npm @google/gemini-cli). It owns
// everything lifeloop knows about Gemini CLI: its manifest and the tests
// that prove it, how its command line is read and a launch pinned to its
// own session (args.go), how a payload is placed at launch and the TUI is
// relaunched (launch.go), its chat files and their parser (telemetry.go,
// parser.go), and its native hooks for `lifeloop host apply` (hooks.go).
//
// Measured against the pinned 0.61.0 (harnesses/, offline against the
// loopback mock model with GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY):
//
//   - Auth needs security.auth.selectedType "gemini-api-key" in a settings
//     file (GOOGLE_GEMINI_BASE_URL alone selects the "gateway" auth type:
//     exit 41), and the folder trusted (GEMINI_CLI_TRUST_WORKSPACE=true or
//     --skip-trust, else exit 55).
//   - The TUI (TestRunGeminiTUI) takes typed prompts once it shows "Type
//     your message"; an Enter within 30 ms of the previous key is a
//     newline. /quit exits 0. Before a prompt whose previous response's
//     prompt tokens reached the threshold it compresses the history (two
//     generateContent calls) and writes "Context compressed from X% to
//     Y%." to the chat file.
//   - `gemini` re-spawns itself as a child node process; the parent
//     ignores SIGINT, SIGTERM and SIGHUP and exits with the child's code,
//     so signals must reach the process group (lifeloop's do).
//   - The chat file is $HOME/.gemini/tmp/<project>/chats/
//     session-<YYYY-MM-DDTHH-MM>-<id[:8]>.jsonl, append-only JSONL (see
//     Parser); the project folder is a slug of the working folder's name,
//     the file's projectHash the SHA-256 of its path. --session-id ID
//     starts a session with that id, after a wait on the CLI's own
//     project-registry lock (docs/harnesses.md), so lifeloop pins
//     interactive launches only; --resume ID continues one in the same
//     file.
//   - Token usage is the model response's usageMetadata copied verbatim
//     into "tokens" {input, output, cached, thoughts, tool, total}; no
//     window is recorded (the CLI's tokenLimit: 1 048 576, Gemma 4:
//     256 000), and the history is compressed once a response's prompt
//     tokens reach model.compressionThreshold (default 0.5) of it.
//
// Not done: a hook bridge for `lifeloop run` (the CLI has no per-launch
// settings flag and its system settings files must be owned by root, so
// lifeloop would have to write the user's or the project's settings;
// hooks.go), hence no payload placed at a hook, and
// pre_session placement for `lifeloop run --payload` (the CLI has no flag
// that adds to its system prompt).
package gemini

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is Gemini CLI to the registry.
type Harness struct{}

var (
	_ adapters.Harness       = Harness{}
	_ adapters.SessionPinner = Harness{}
	_ adapters.LaunchPlacer  = Harness{}
	_ adapters.Relauncher    = Harness{}
	_ adapters.HostInstaller = Harness{}
	_ adapters.Telemetry     = Harness{}
)

// Describe implements adapters.Harness. Gemini CLI is not among OrgLoop's
// harness ids, so it projects as "other" with the adapter name kept.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "gemini", DisplayName: "Gemini CLI", Conformance: adapters.ConformanceV1, Aliases: []string{"gemini-cli"},
		Names: []string{"gemini", "gemini-cli", "@google/gemini-cli"},
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"telemetry_sources.usage.tokens":                     "TestUsageEverywhere",
		"telemetry_sources.usage.cost":                       "TestUsageEverywhere",
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunGeminiPrompt",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunGeminiTUI",
		"lifecycle_events.session.ending/launcher_wrapper":   "TestRunGeminiTUISigint",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunGeminiTUISigint",
		"renewal.reset.wrapper_mediated":                     "TestRenewGeminiTUI",
		"renewal.continuation.observation":                   "TestRenewGeminiTUI",
		"renewal.continuation.payload_delivery":              "TestRenewGeminiTUI",
		"lifecycle_events.session.started/native_hook":       "TestHostApplyGeminiHooks",
		"lifecycle_events.frame.opening/native_hook":         "TestHostApplyGeminiHooks",
		"lifecycle_events.frame.ending/native_hook":          "TestHostApplyGeminiHooks",
		"lifecycle_events.frame.ended/native_hook":           "TestHostApplyGeminiHooks",
		"lifecycle_events.session.ending/native_hook":        "TestHostApplyGeminiHooks",
		"lifecycle_events.session.ended/native_hook":         "TestHostApplyGeminiHooks",
		// From the chat file (telemetry.go, parser.go).
		"lifecycle_events.frame.opening/launcher_wrapper":             "TestRunGeminiTelemetry",
		"lifecycle_events.frame.opened/launcher_wrapper":              "TestRunGeminiTelemetry",
		"lifecycle_events.frame.ending/launcher_wrapper":              "TestRunGeminiTelemetry",
		"lifecycle_events.frame.ended/launcher_wrapper":               "TestRunGeminiTelemetry",
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunGeminiTelemetry",
		"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunGeminiTUI",
		"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
		"context_pressure":                    "TestRunGeminiTelemetry",
		"session_identity.harness_session_id": "TestRunGeminiTelemetry",
		"telemetry_sources.transcript":        "TestRunGeminiTelemetry",
		"telemetry_sources.attention.hook":    "TestAttentionGeminiPermission",
		// lifeloop watch.
		"lifecycle_events.frame.opening/telemetry_only":             "TestWatchGemini",
		"lifecycle_events.frame.opened/telemetry_only":              "TestWatchGemini",
		"lifecycle_events.frame.ending/telemetry_only":              "TestWatchGemini",
		"lifecycle_events.frame.ended/telemetry_only":               "TestWatchGemini",
		"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchGemini",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("gemini", "Gemini CLI", contract.RolePrimaryWorker)
	// Without `lifeloop run`, hooks installed by `lifeloop host apply`
	// report the session and its turns (native_hook, hooks.go).
	adapters.AddMode(&m, contract.ModeNativeHook)
	for _, e := range []contract.Event{contract.EventSessionStarted, contract.EventFrameOpening, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventSessionEnding, contract.EventSessionEnded} {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeNativeHook)
	}
	// From the chat file: a prompt record opens a frame, the first model
	// record opens it, a model answer without tool calls ends it; usage,
	// the session id, compression notices, degradation of the source.
	// Raising the frame events as synthesized here lowers their
	// native_hook claim to synthesized too (one support state per event).
	frames := []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded}
	for _, e := range frames {
		adapters.Raise(m, e, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	}
	adapters.RaiseWatch(&m, append(frames, contract.EventContextPressureObserved)...)
	// lifeloop renew: /quit, then `--resume ID` or a new pinned session
	// with the payload as the start of the first prompt (launch.go).
	adapters.RaiseWrapperRenewal(&m)
	adapters.RaiseTelemetry(&m, string(SourceChat), "lifeloop run follows the chat file ($HOME/.gemini/tmp/<project>/chats/session-*.jsonl): context in use = tokens.total of the last model response (its usageMetadata.totalTokenCount), against the model's window × model.compressionThreshold (default 0.5: where the CLI compresses its history); receipts on level changes")
	// Attention under `lifeloop run` with the hooks `lifeloop host apply`
	// installs: Notification (role attention, no receipt; hooks.go).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.hook", Support: contract.SupportNative})
	// Usage under `lifeloop run`: each call's tokens from the chat file's
	// gemini records; Gemini CLI records no cost, lifeloop prices the tokens
	// (TestUsageEverywhere: ledger, views and backends, priced and
	// unpriced).
	adapters.RaiseUsage(&m, false)
	return m
}

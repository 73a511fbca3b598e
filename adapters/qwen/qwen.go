// Package qwen is Qwen Code (npm @qwen-code/qwen-code, binary `qwen`), a
// fork of Gemini CLI. It owns everything lifeloop knows about Qwen Code:
// its manifest and the tests that prove it (qwen.go), its command line
// (args.go), a launch pinned to its own session and the relaunch
// (launch.go), a payload placed at launch (placement.go), its session
// files and their parser (telemetry.go, parser.go), the tokens of its
// model calls (usage.go), its permission dialog on the screen and its
// hooks (attention.go, hooks.go).
//
// Measured against the pinned 0.24.4 (harnesses/, Node >= 22, offline
// against the loopback mock model through its Anthropic provider:
// ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY and ANTHROPIC_MODEL select it;
// no login):
//
//   - `node_modules/.bin/qwen` is a Node entry that starts the CLI again
//     as a child Node (with --expose-gc); signals go to the process group
//     (lifeloop's do).
//   - The session file is ~/.qwen/projects/<cwd, every character but
//     [a-zA-Z0-9] turned into ->/chats/<session id>.jsonl, Claude-like
//     records with Gemini-style messages (see Parser). It shares no file
//     format with Gemini CLI, whose chat files lifeloop's gemini adapter
//     reads: what the two share is through the kit (kit.NewUUID,
//     kit.OptionValue).
//   - Every model call, the main conversation's and Qwen Code's own side
//     agents' (the memory extractor after a turn), is a ui_telemetry
//     record (qwen-code.api_response) in the session file, with
//     Gemini-shaped counts; the cache writes are not kept apart (see
//     NewUsageParser).
//   - `--session-id UUID` starts a session with that id, so lifeloop pins
//     every launch that chooses none; `--resume ID` continues one in the
//     same file, `--continue` the folder's latest.
//
// Hooks under `lifeloop run` (hooks.go): a per-launch system-defaults
// settings file (QWEN_CODE_SYSTEM_DEFAULTS_PATH, in the lifeloop session
// folder, the person's own merged in) runs Stop, PreCompact, SessionEnd
// and Notification (attention); Stop's frame is read from the session
// file. SessionStart is not installed (hooks.go says why).
//
// Not done: a frame.opening from UserPromptSubmit (it runs before Qwen
// Code writes the record that names the turn), a payload placed at a
// hook (SessionStart's additionalContext reaches the model, measured,
// but lifeloop does not place there yet), and `lifeloop host apply` (a
// one-shot runs no SessionEnd, so a session told by hooks alone would not
// end); a payload placed at launch has no private channel
// (--append-system-prompt takes the text itself, no file form was
// found), so it is placed only for a session run with
// --payload-argv-ok; an automatic compaction (at its threshold) is
// parsed as one but only /compress is proven.
package qwen

import (
	"slices"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is Qwen Code to the registry.
type Harness struct {
	// The record side of attention says nothing (the session file
	// records no dialog); the screen and hook sides are attention.go's.
	kit.ScreenAttention
}

var (
	_ adapters.Harness         = Harness{}
	_ adapters.SessionPinner   = Harness{}
	_ adapters.SessionResumer  = Harness{}
	_ adapters.Telemetry       = Harness{}
	_ adapters.Versioned       = Harness{}
	_ adapters.Relauncher      = Harness{}
	_ adapters.LaunchPlacer    = Harness{}
	_ adapters.UsageReader     = Harness{}
	_ adapters.AttentionReader = Harness{}
	_ adapters.BridgeEnviron   = Harness{}
	_ adapters.InputReadyText  = Harness{}
)

// Describe implements adapters.Harness. Qwen Code is not among OrgLoop's
// harness ids, so it projects as "other" with the adapter name kept.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "qwen", DisplayName: "Qwen Code", Conformance: adapters.ConformanceV1, Aliases: []string{"qwen-code"},
		Names: []string{"qwen", "@qwen-code/qwen-code"},
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunQwenPrompt",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunQwenPrompt",
		"lifecycle_events.session.ending/launcher_wrapper":   "TestRunQwenPrompt",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunQwenPrompt",
		// From the session file (telemetry.go, parser.go).
		"lifecycle_events.frame.opening/launcher_wrapper":             "TestRunQwenPrompt",
		"lifecycle_events.frame.opened/launcher_wrapper":              "TestRunQwenPrompt",
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunQwenPrompt",
		"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunQwenCompress",
		"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
		"context_pressure":                    "TestRunQwenPrompt",
		"session_identity.harness_session_id": "TestRunQwenPrompt",
		"telemetry_sources.transcript":        "TestRunQwenPrompt",
		// Usage from the session file (usage.go).
		"telemetry_sources.usage.tokens": "TestUsageQwen",
		"telemetry_sources.usage.cost":   "TestUsageQwen",
		// The shell command's permission dialog on the screen (attention.go).
		"telemetry_sources.attention.screen": "TestAttentionQwenPermission",
		// The Notification hook under the bridge (attention.go, hooks.go).
		"telemetry_sources.attention.hook": "TestAttentionQwenPermissionHook",
		// Launch placement and renewal (placement.go, launch.go).
		"placement.pre_session":                 "TestRenewQwenTUI",
		"renewal.reset.wrapper_mediated":        "TestRenewQwenTUI",
		"renewal.continuation.observation":      "TestRenewQwenTUI",
		"renewal.continuation.payload_delivery": "TestRenewQwenTUI",
		// The hook bridge (hooks.go): Stop ends the file's frame
		// natively, SessionEnd tells the TUI's end.
		"lifecycle_events.frame.ending/launcher_wrapper": "TestRunQwenHooks",
		"lifecycle_events.frame.ended/launcher_wrapper":  "TestRunQwenHooks",
		// lifeloop watch.
		"lifecycle_events.frame.opening/telemetry_only":             "TestWatchQwen",
		"lifecycle_events.frame.opened/telemetry_only":              "TestWatchQwen",
		"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchQwen",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("qwen", "Qwen Code", contract.RolePrimaryWorker)
	// From the session file: a prompt opens a frame, the turn's first
	// assistant record opens it, an answer that asks for no tool ends
	// it; usage, the session id, compaction, degradation of the source.
	frames := []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded}
	for _, e := range frames {
		if !slices.Contains(bridgedFrameEvents, e) {
			adapters.Raise(m, e, contract.SupportSynthesized, contract.ModeLauncherWrapper)
		}
	}
	// Under `lifeloop run` the hook bridge (a per-launch system-defaults
	// file) ends each turn natively: Stop → frame.ending/frame.ended, in
	// the session file's frame. `lifeloop watch` has no hooks: there the
	// file's frames are synthesized, which the manifest's one support
	// state per event cannot say beside the native claim (RaiseWatch
	// leaves native events alone).
	for _, e := range bridgedFrameEvents {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeLauncherWrapper)
	}
	adapters.RaiseWatch(&m, append(frames, contract.EventContextPressureObserved)...)
	adapters.RaiseTelemetry(&m, string(SourceChat), "lifeloop run follows the session file (~/.qwen/projects/<project>/chats/<id>.jsonl): context in use = the prompt of the last model call (usageMetadata.promptTokenCount), against the model's contextWindowSize the same record names; receipts on level changes and compactions")
	// Usage under `lifeloop run`: each call's tokens from the session
	// file's api_response records, priced with the price table
	// (TestUsageQwen: ledger, views and backends, priced and unpriced).
	adapters.RaiseUsage(&m, false)
	// Attention under `lifeloop run`: the shell command's permission
	// dialog on the screen (needs_permission, matched on the output).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.screen", Support: contract.SupportSynthesized})
	// Attention under the hook bridge: the Notification hook
	// (permission_prompt, idle_prompt; role attention, no receipt).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.hook", Support: contract.SupportNative})
	// pre_session: --append-system-prompt at launch, also when a renewal
	// relaunches the TUI (resumed with --resume ID, or fresh); in argv, so
	// only with --payload-argv-ok.
	m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	adapters.RaiseWrapperRenewal(&m)
	m.Renewal.Evidence = contract.Ptr("lifeloop renew stops the TUI (SIGTERM) and starts it again on the same terminal, resumed (--resume ID) or fresh, the continuation payload in --append-system-prompt: it has no file form, so the body is in argv and lifeloop places it only in a session run with --payload-argv-ok; proven against the real binary")
	return m
}

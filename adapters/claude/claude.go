// Package claude is Anthropic's Claude Code (npm @anthropic-ai/claude-code)
// and everything lifeloop knows about it: its manifest and evidence
// (claude.go), its command line (args.go), launch placement, relaunch and
// session pinning (launch.go), where its transcripts live and how to read
// them (telemetry.go, discover.go, parser.go), and its hooks: the
// per-launch bridge and the settings `host apply` changes (hooks.go).
//
// Measured against Claude Code 2.1.197 (offline, with the loopback mock
// model): its option arities, the transcript folder name, the transcript
// line format, the hook inputs, --append-system-prompt(-file) in -p and
// interactive mode, and --resume / --session-id. Its interactive TUI needs
// no launch adjustment.
package claude

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"syscall"
)

// Harness is Claude Code to the registry. Its argv methods know the
// facts a launch read about the Claude it starts (WithFacts), and run
// nothing themselves.
type Harness struct {
	facts adapters.Facts
}

var (
	_ adapters.Harness               = Harness{}
	_ adapters.LaunchPlacer          = Harness{}
	_ adapters.PlacementExternalizer = Harness{}
	_ adapters.Relauncher            = Harness{}
	_ adapters.SessionPinner         = Harness{}
	_ adapters.Telemetry             = Harness{}
	_ adapters.HookBridge            = Harness{}
	_ adapters.HostInstaller         = Harness{}
	_ adapters.FactsTaker            = Harness{}
)

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "claude", Aliases: []string{"claude-code"}, DisplayName: "Claude Code", Conformance: adapters.ConformanceV1,
		Names:          []string{"claude", "claude-code", "@anthropic-ai/claude-code"},
		OrgLoopHarness: contract.HarnessClaudeCode,
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"telemetry_sources.usage.tokens":                     "TestUsageEverywhere",
		"telemetry_sources.usage.cost":                       "TestUsageEverywhere",
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunClaudePrint",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunClaudeTUI",
		"lifecycle_events.session.ending/launcher_wrapper":   "TestRunClaudeTUISigint",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunClaudeTUISigint",
		"lifecycle_events.supervisor.tick/launcher_wrapper":  "TestRunClaudeTUI",
		"lifecycle_events.frame.opening/launcher_wrapper":    "TestRunClaudeHookBridge",
		"lifecycle_events.frame.ending/launcher_wrapper":     "TestRunClaudeHookBridge",
		"lifecycle_events.frame.ended/launcher_wrapper":      "TestRunClaudeHookBridge",
		"placement.pre_session":                              "TestRunPayloadAtLaunch",
		"renewal.reset.wrapper_mediated":                     "TestRenewClaudeTUIUnderLifeloop",
		"renewal.continuation.observation":                   "TestRenewClaudeTUIUnderLifeloop",
		"renewal.continuation.payload_delivery":              "TestRenewClaudeTUIUnderLifeloop",
		"placement.pre_frame_leading":                        "TestRunClaudeHookBridge",
		"lifecycle_events.session.started/native_hook":       "TestHostApplyClaudeNativeHooks",
		"lifecycle_events.frame.opening/native_hook":         "TestHostApplyClaudeNativeHooks",
		"lifecycle_events.frame.ending/native_hook":          "TestHostApplyClaudeNativeHooks",
		"lifecycle_events.frame.ended/native_hook":           "TestHostApplyClaudeNativeHooks",
		"lifecycle_events.session.ending/native_hook":        "TestHostApplyClaudeNativeHooks",
		"lifecycle_events.session.ended/native_hook":         "TestHostApplyClaudeNativeHooks",
		// From the transcript (adapters/claude).
		"lifecycle_events.frame.opened/launcher_wrapper":              "TestRunClaudeTelemetry",
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunClaudeTelemetry",
		"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunClaudeCompactionTelemetry",
		"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
		"context_pressure":                    "TestRunClaudeTelemetry",
		"session_identity.harness_session_id": "TestRunClaudeConcurrentSameFolder",
		"telemetry_sources.transcript":        "TestRunClaudeTelemetry",
		// Attention (AttentionRecord, AttentionScreen; launcher/attention_sources.go).
		"telemetry_sources.attention.transcript": "TestAttentionErrorClaude",
		"telemetry_sources.attention.screen":     "TestAttentionScreenClaude",
		"telemetry_sources.attention.hook":       "TestAttentionClaudePermission",
		// lifeloop watch (watch/watch.go).
		"lifecycle_events.frame.opened/telemetry_only":              "TestWatchClaude",
		"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchClaude",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("claude", "Claude Code", contract.RolePrimaryWorker)
	// Under `lifeloop run` the hook bridge (a per-launch --settings file)
	// reports turns natively: UserPromptSubmit → frame.opening, Stop →
	// frame.ending/frame.ended.
	for _, e := range bridgedFrameEvents {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeLauncherWrapper)
	}
	// Without `lifeloop run`, hooks installed by `lifeloop host apply`
	// report the session and its turns (native_hook).
	adapters.AddMode(&m, contract.ModeNativeHook)
	for _, e := range []contract.Event{contract.EventSessionStarted, contract.EventFrameOpening, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventSessionEnding, contract.EventSessionEnded} {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeNativeHook)
	}
	// From the transcript (<config>/projects/<cwd>/<session>.jsonl):
	// frame.opened on the first assistant line of a turn (the hook bridge
	// has no hook for it), pressure, compaction, the session id,
	// degradation of the source.
	adapters.Raise(m, contract.EventFrameOpened, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	adapters.RaiseWatch(&m, contract.EventFrameOpened, contract.EventContextPressureObserved)
	adapters.RaiseTelemetry(&m, "transcript", "lifeloop run follows the transcript (~/.claude/projects/<cwd>/<session>.jsonl): context in use = input + cache creation + cache read + output tokens of the last assistant message, against the model's window (CLAUDE_CODE_MAX_CONTEXT_TOKENS / CLAUDE_CODE_AUTO_COMPACT_WINDOW when set); receipts on level changes and compactions")
	// pre_session: --append-system-prompt(-file) at launch (or the
	// SessionStart hook); pre_frame_leading: the UserPromptSubmit hook's
	// additionalContext. 8 KiB is the bound lifeloop places.
	m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	adapters.RaiseWrapperRenewal(&m)
	// Attention under `lifeloop run`: the transcript's API error line
	// (stopped_on_error) and the permission dialog's text on the screen
	// (needs_permission, matched on the output stream).
	m.TelemetrySources = append(m.TelemetrySources,
		contract.TelemetrySource{Source: "attention.transcript", Support: contract.SupportNative},
		contract.TelemetrySource{Source: "attention.screen", Support: contract.SupportSynthesized})
	m.Placement[contract.ManifestPreFrameLeading] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	// Attention under `lifeloop run`: the launch's PermissionRequest,
	// Notification and StopFailure hooks (role attention, no receipt).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.hook", Support: contract.SupportNative})
	// Usage under `lifeloop run`: each call's tokens from the transcript's
	// assistant lines; Claude Code records no cost, lifeloop prices the
	// tokens (TestUsageEverywhere: ledger, views and backends, priced and
	// unpriced).
	adapters.RaiseUsage(&m, false)
	return m
}

// StopSignal implements adapters.Relauncher: Claude Code ends its TUI on
// SIGINT with exit code 0 and its SessionEnd hook (reason "other"), from
// an empty prompt, a draft or an open permission dialog alike
// (e2e/renew_safe_test.go).
func (Harness) StopSignal() syscall.Signal { return syscall.SIGINT }

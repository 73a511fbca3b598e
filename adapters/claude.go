package adapters

import "github.com/lifeloop/lifeloop/contract"

// hookPlacementMaxBytes bounds a payload lifeloop places through a hook's
// additionalContext or a launch flag.
const hookPlacementMaxBytes = 8192

// claude is Anthropic's Claude Code (npm @anthropic-ai/claude-code;
// measured: 2.1.197). Its interactive TUI needs no launch adjustment.
func claude() *Adapter {
	return &Adapter{
		ID:          "claude",
		Aliases:     []string{"claude-code"},
		DisplayName: "Claude Code",
		Conformance: ConformanceV1,
		Evidence: withEvidence(map[string]string{
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
			// From the transcript (launcher/telemetry.go).
			"lifecycle_events.frame.opened/launcher_wrapper":              "TestRunClaudeTelemetry",
			"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunClaudeTelemetry",
			"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunClaudeCompactionTelemetry",
			"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
			"context_pressure":                    "TestRunClaudeTelemetry",
			"session_identity.harness_session_id": "TestRunClaudeConcurrentSameFolder",
			"telemetry_sources.transcript":        "TestRunClaudeTelemetry",
			// lifeloop watch (launcher/watch.go).
			"lifecycle_events.frame.opened/telemetry_only":              "TestWatchClaude",
			"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchClaude",
		}),
		ExitCommand:   "/exit",
		TelemetryKind: "claude",
		names:         []string{"claude", "claude-code", "@anthropic-ai/claude-code"},
		manifest: func() contract.AdapterManifest {
			m := wrapperManifest("claude", "Claude Code", contract.RolePrimaryWorker)
			// Under `lifeloop run` the hook bridge (a per-launch --settings
			// file) reports turns natively: UserPromptSubmit → frame.opening,
			// Stop → frame.ending/frame.ended.
			for _, e := range []contract.Event{contract.EventFrameOpening, contract.EventFrameEnding, contract.EventFrameEnded} {
				raise(m, e, contract.SupportNative, contract.ModeLauncherWrapper)
			}
			// Without `lifeloop run`, hooks installed by `lifeloop host
			// apply` report the session and its turns (native_hook).
			addMode(&m, contract.ModeNativeHook)
			for _, e := range []contract.Event{contract.EventSessionStarted, contract.EventFrameOpening, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventSessionEnding} {
				raise(m, e, contract.SupportNative, contract.ModeNativeHook)
			}
			// From the transcript (<config>/projects/<cwd>/<session>.jsonl):
			// frame.opened on the first assistant line of a turn (the
			// hook bridge has no hook for it), pressure, compaction, the
			// session id, degradation of the source.
			raise(m, contract.EventFrameOpened, contract.SupportSynthesized, contract.ModeLauncherWrapper)
			raiseWatch(&m, contract.EventFrameOpened, contract.EventContextPressureObserved)
			raiseTelemetry(&m, "transcript", "lifeloop run follows the transcript (~/.claude/projects/<cwd>/<session>.jsonl): context in use = input + cache creation + cache read + output tokens of the last assistant message, against the model's window (CLAUDE_CODE_MAX_CONTEXT_TOKENS / CLAUDE_CODE_AUTO_COMPACT_WINDOW when set); receipts on level changes and compactions")
			// pre_session: --append-system-prompt(-file) at launch (or the
			// SessionStart hook); pre_frame_leading: the UserPromptSubmit
			// hook's additionalContext. 8 KiB is the bound lifeloop places.
			m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(hookPlacementMaxBytes)}
			// `lifeloop renew` stops the harness and starts it again on the
			// same terminal with the continuation payload placed at launch.
			m.Renewal.Reset.WrapperMediated = contract.SupportSynthesized
			m.Renewal.Continuation.Observation = contract.SupportSynthesized
			m.Renewal.Continuation.PayloadDelivery = contract.SupportSynthesized
			m.Renewal.Profiles = []string{"lifeloop-wrapper"}
			m.Renewal.Evidence = contract.Ptr("lifeloop run stops the harness (exit command, then signals) and relaunches it on the same terminal with the continuation payload placed at launch; proven against the real binary")
			m.Placement[contract.ManifestPreFrameLeading] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(hookPlacementMaxBytes)}
			return m
		},
	}
}

package adapters

import "github.com/lifeloop/lifeloop/contract"

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
		}),
		ExitCommand:   "/exit",
		TelemetryKind: "claude",
		names:         []string{"claude", "claude-code", "@anthropic-ai/claude-code"},
		manifest: func() contract.AdapterManifest {
			return wrapperManifest("claude", "Claude Code", contract.RolePrimaryWorker)
		},
	}
}

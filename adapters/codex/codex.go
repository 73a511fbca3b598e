// Package codex is OpenAI's Codex CLI (npm @openai/codex). It owns
// everything lifeloop knows about Codex: its manifest and the tests that
// prove it, how its command line is read (args.go), how a launch is
// adjusted, carries a transport envelope and is relaunched (launch.go), its
// rollout files and their parser (telemetry.go), and its native hooks and
// notify program (hooks.go, toml.go).
//
// Measured against the pinned Codex 0.169.0 (harnesses/, with the loopback
// mock model):
//
//   - The TUI (no subcommand, resume, fork, agents) starts a detached
//     app-server daemon unless given --no-daemon, which it accepts right
//     after the program (TestCodexAcceptsPreparedLaunch).
//   - -c developer_instructions="…" becomes a developer message of a new
//     thread (TUI and exec); on a resumed thread it is ignored, so there the
//     text goes into the prompt argument. Codex has no file form for either.
//   - The rollout is $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl:
//     {timestamp, type, payload} lines, a session_meta first line with the
//     thread id and cwd, task_started/token_count/task_complete events and
//     compacted records.
//   - The notify program (-c notify=[…]) is called at each turn's end with
//     its JSON as the last argument; the TUI also calls it for a hidden
//     title-generation thread. hooks.json hooks run only once trusted.
package codex

import (
	"path/filepath"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is Codex to the registry.
type Harness struct{}

var (
	_ adapters.Harness               = Harness{}
	_ adapters.LaunchPreparer        = Harness{}
	_ adapters.LaunchPlacer          = Harness{}
	_ adapters.PlacementExternalizer = Harness{}
	_ adapters.Relauncher            = Harness{}
	_ adapters.Telemetry             = Harness{}
	_ adapters.HookBridge            = Harness{}
	_ adapters.HostInstaller         = Harness{}
)

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "codex", DisplayName: "Codex", Conformance: adapters.ConformanceV1,
		Names:          []string{"codex", "@openai/codex"},
		OrgLoopHarness: contract.HarnessCodex,
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"telemetry_sources.usage.tokens":                     "TestUsageEverywhere",
		"telemetry_sources.usage.cost":                       "TestUsageEverywhere",
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunCodexExec",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunCodexTUI",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunCodexTUI",
		"placement.pre_session":                              "TestRunPayloadAtLaunch",
		"renewal.reset.wrapper_mediated":                     "TestRenewCodexTUIUnderLifeloop",
		"renewal.continuation.observation":                   "TestRenewCodexTUIUnderLifeloop",
		"renewal.continuation.payload_delivery":              "TestRenewCodexTUIUnderLifeloop",
		"lifecycle_events.frame.ended/launcher_wrapper":      "TestRunCodexNotify",
		"lifecycle_events.session.started/native_hook":       "TestHostApplyCodexHooksAndNotify",
		"lifecycle_events.frame.opening/native_hook":         "TestHostApplyCodexHooksAndNotify",
		"lifecycle_events.frame.opened/native_hook":          "TestHostApplyCodexHooksAndNotify",
		"lifecycle_events.frame.ending/native_hook":          "TestHostApplyCodexHooksAndNotify",
		"lifecycle_events.frame.ended/native_hook":           "TestHostApplyCodexHooksAndNotify",
		"lifecycle_events.session.ending/native_hook":        "TestHostApplyCodexHooksAndNotify",
		"lifecycle_events.session.ended/native_hook":         "TestHostApplyCodexHooksAndNotify",
		// From the rollout (telemetry.go).
		"lifecycle_events.frame.opening/launcher_wrapper":             "TestRunCodexTelemetry",
		"lifecycle_events.frame.opened/launcher_wrapper":              "TestRunCodexTelemetry",
		"lifecycle_events.frame.ending/launcher_wrapper":              "TestRunCodexTelemetry",
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunCodexTelemetry",
		"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunCodexCompactionTelemetry",
		"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
		"context_pressure":                    "TestRunCodexTelemetry",
		"session_identity.harness_session_id": "TestRunCodexTelemetry",
		"telemetry_sources.rollout":           "TestRunCodexTelemetry",
		// Attention: the rollout's task_complete with an error (AttentionRecord).
		"telemetry_sources.attention.transcript": "TestAttentionErrorCodex",
		"telemetry_sources.attention.hook":       "TestAttentionCodexPermission",
		// lifeloop watch (watch/watch.go).
		"lifecycle_events.frame.opening/telemetry_only":             "TestWatchCodex",
		"lifecycle_events.frame.opened/telemetry_only":              "TestWatchCodex",
		"lifecycle_events.frame.ending/telemetry_only":              "TestWatchCodex",
		"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchCodex",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("codex", "Codex", contract.RolePrimaryWorker)
	// Under `lifeloop run` the notify program set for the launch
	// (-c notify=[...]) reports each turn's end natively: in the TUI, and
	// in a one-shot whose user has a notify program of their own. A plain
	// `codex exec` gets none (BridgeArgs): its rollout reports the end.
	adapters.Raise(m, contract.EventFrameEnded, contract.SupportNative, contract.ModeLauncherWrapper)
	// Without `lifeloop run`, hooks installed by `lifeloop host apply`
	// (once trusted) and the notify program report the session and its
	// turns (native_hook).
	adapters.AddMode(&m, contract.ModeNativeHook)
	for _, e := range []contract.Event{contract.EventSessionStarted, contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventSessionEnding, contract.EventSessionEnded} {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeNativeHook)
	}
	// From the rollout: task_started → frame.opening/opened, task_complete
	// → frame.ending (frame.ended is native through notify), pressure,
	// compaction, the thread id, degradation of the source. Raising
	// frame.opening/opened/ending as synthesized in launcher_wrapper lowers
	// their native_hook claim to synthesized too (one support state per
	// event).
	for _, e := range []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding} {
		adapters.Raise(m, e, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	}
	adapters.RaiseWatch(&m, contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventContextPressureObserved)
	// Attention under `lifeloop run`: a task_complete that carries an
	// error (stopped_on_error; Codex has no error hook).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.transcript", Support: contract.SupportNative})
	adapters.RaiseTelemetry(&m, string(SourceRollout), "lifeloop run follows the rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl): context in use = last_token_usage.total_tokens of each token_count, against its model_context_window (Codex's effective window); receipts on level changes and compactions")
	// pre_session: developer_instructions at launch, from a profile file
	// (ExternalizePlacement).
	m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	adapters.RaiseWrapperRenewal(&m)
	// Attention under `lifeloop run` with the hooks `lifeloop host apply`
	// installs, once trusted: PermissionRequest (role attention, no
	// receipt; hooks.go).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.hook", Support: contract.SupportNative})
	// Usage under `lifeloop run`: each call's tokens from the rollout's
	// token_count events; Codex records no cost, lifeloop prices the tokens
	// (TestUsageEverywhere: ledger, views and backends, priced and
	// unpriced).
	adapters.RaiseUsage(&m, false)
	return m
}

// homeDir returns Codex's home folder, $CODEX_HOME, else $HOME/.codex;
// "" when neither is set.
func homeDir(getenv func(string) string) string {
	if h := getenv("CODEX_HOME"); h != "" {
		return h
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// envHome is homeDir for the harness environment env.
func envHome(env []string) string {
	return homeDir(func(k string) string { return adapters.EnvValue(env, k) })
}

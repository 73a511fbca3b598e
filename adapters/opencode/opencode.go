// Package opencode is OpenCode (npm opencode-ai). It owns everything
// lifeloop knows about OpenCode: its manifest and the tests that prove it,
// its session store and the reader that follows it (store.go,
// telemetry.go), the parser of its records (parser.go), the context
// windows of its configuration (config.go), how a launch carries a
// continuation payload and is relaunched (launch.go), the hook bridge
// plugin (bridge.go, bridge.js) and the one composition of
// OPENCODE_CONFIG_CONTENT they share (configcontent.go).
//
// Measured against the pinned OpenCode 1.18.33 (harnesses/, offline, with
// a provider using its bundled @ai-sdk/anthropic package at the loopback
// mock model):
//
//   - Sessions are not files: they are rows of one SQLite database in WAL
//     mode, $XDG_DATA_HOME/opencode/opencode.db ($OPENCODE_DB overrides),
//     shared by every OpenCode process and project. A session row holds
//     the working folder (directory) and a parent for sub-agent sessions;
//     the event table is the session's own append-only log (seq ascending
//     per session): session.created.1, message.updated.1 (messages, with
//     tokens, finish, completion time, error), message.part.updated.1
//     (parts: text, step-start, step-finish with the request's tokens,
//     compaction, tool). lifeloop follows that log read-only
//     (modernc.org/sqlite, no cgo), from the rows it has not read yet,
//     when fsnotify reports a write to the database or its WAL.
//   - `opencode run` and the TUI are one process each (no helpers, no
//     port unless --port). The TUI creates its session row at the first
//     prompt, and /new a second one at the prompt after it; /exit,
//     Ctrl-C, Ctrl-D and SIGINT/SIGTERM/SIGHUP all exit 0; on exit it
//     prints `Continue  opencode -s <session id>`.
//   - Compaction runs after the turn whose usage reaches limit.context -
//     limit.output, inside the same process: a user message with a
//     compaction part, the summary (an assistant message, mode
//     compaction), then a synthetic "continue" prompt OpenCode answers as
//     a new turn.
//   - Every model request also carries headers x-session-id and
//     x-session-affinity with the session id; the TUI's own HTTP server
//     and its /event stream exist only with --port. The database rows
//     carry the same facts as the server's session and message events
//     (the event table is what the server's /global/event stream replays
//     as sync events).
//   - A plugin named as a file:// URL in OPENCODE_CONFIG_CONTENT's
//     "plugin" list loads for one launch without a file in the user's
//     folders and gets every bus event. Under `lifeloop run` the hook
//     bridge is such a plugin (bridge.go, bridge.js): it reports the
//     turns natively (frame.opening, frame.opened, frame.ending,
//     frame.ended, with the database's frame ids), each top-level session
//     created (session.started: the TUI's /new makes a second harness
//     session of the same process) and each compaction
//     (context.compacted, under its request's id, with the database's
//     figures); the database stays the source of the session id and
//     pressure, and of the frames and compactions of a one-shot `opencode
//     run` (which loads no plugin: the database reports the same
//     moments, and loading any plugin costs OpenCode up to 10 % of a
//     short run), under --no-hooks and in `lifeloop watch`. The user's
//     own OPENCODE_CONFIG_CONTENT is merged, never shadowed
//     (configcontent.go).
package opencode

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is OpenCode to the registry.
type Harness struct{}

var (
	_ adapters.Harness   = Harness{}
	_ adapters.Telemetry = Harness{}
)

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "opencode", DisplayName: "OpenCode", Conformance: adapters.ConformanceV1,
		Names:          []string{"opencode", "opencode-ai"},
		OrgLoopHarness: contract.HarnessOpenCode,
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"telemetry_sources.usage.tokens":                     "TestUsageEverywhere",
		"telemetry_sources.usage.cost":                       "TestUsageEverywhere",
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunOpenCodeRun",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunOpenCodeTUI",
		"lifecycle_events.session.ending/launcher_wrapper":   "TestRunOpenCodeTUISigint",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunOpenCodeTUISigint",
		// The hook bridge's plugin (bridge.go, bridge.js).
		"lifecycle_events.frame.opening/launcher_wrapper": "TestRunOpenCodeTUI",
		"lifecycle_events.frame.opened/launcher_wrapper":  "TestRunOpenCodeTUI",
		"lifecycle_events.frame.ending/launcher_wrapper":  "TestRunOpenCodeTUI",
		"lifecycle_events.frame.ended/launcher_wrapper":   "TestRunOpenCodeTUI",
		// From the database (telemetry.go, parser.go).
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunOpenCodeRun",
		"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunOpenCodeTUI", // native from the plugin; from the database in a one-shot (TestRunOpenCodeCompactionTelemetry)
		"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
		"context_pressure":                    "TestRunOpenCodeRun",
		"session_identity.harness_session_id": "TestRunOpenCodeRun",
		"telemetry_sources.database":          "TestRunOpenCodeRun",
		"telemetry_sources.attention.hook":    "TestAttentionOpenCodePermission", // and TestAttentionOpenCodeError
		// lifeloop watch.
		"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchOpenCode",
		// Launch placement and renewal (launch.go).
		"placement.pre_session":                 "TestRunOpenCodePayloadAtLaunch",
		"renewal.reset.wrapper_mediated":        "TestRenewOpenCodeTUIUnderLifeloop",
		"renewal.continuation.observation":      "TestRenewOpenCodeTUIUnderLifeloop",
		"renewal.continuation.payload_delivery": "TestRenewOpenCodeTUIUnderLifeloop",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("opencode", "OpenCode", contract.RolePrimaryWorker)
	// Under `lifeloop run` the bridge plugin (named in
	// OPENCODE_CONFIG_CONTENT; not for a one-shot `opencode run`, whose
	// moments the database alone reports) reports turns natively from
	// OpenCode's bus:
	// a turn's first user message part → frame.opening, its first answer
	// → frame.opened, the last answer completed (or session.idle) →
	// frame.ending and frame.ended; a compaction's summary completed →
	// context.compacted. The database reports the same frames and
	// compactions with the same ids (they wait for the plugin), and usage
	// and the session id; it is what `lifeloop watch` and --no-hooks read.
	for _, e := range bridgedEvents {
		adapters.Raise(m, e, contract.SupportNative, contract.ModeLauncherWrapper)
	}
	// watch records the database's frames too; a manifest holds one
	// support state per event, so telemetry_only is not declared for them
	// (it would lower the native claim).
	adapters.RaiseWatch(&m, contract.EventContextPressureObserved)
	adapters.RaiseTelemetry(&m, string(SourceDatabase), "lifeloop run follows the session's rows in OpenCode's SQLite database ($XDG_DATA_HOME/opencode/opencode.db, read-only): context in use = tokens.total of each model request, against the model's limit.context from OpenCode's configuration (what its TUI shows as % used); receipts on level changes and compactions")
	// RaiseTelemetry claims the database's compactions synthesized; the
	// plugin reports them natively, and the database's report of the same
	// compaction (its id) gives the one receipt its figures.
	m.LifecycleEvents[contract.EventContextCompacted] = contract.EventSupport{Support: contract.SupportNative, Modes: []contract.IntegrationMode{contract.ModeLauncherWrapper}}
	// pre_session: a private file in OPENCODE_CONFIG_CONTENT's
	// instructions, read into the system prompt.
	m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	adapters.RaiseWrapperRenewal(&m)
	// Attention under `lifeloop run`: the plugin's permission, question,
	// error and status events (bridge.js, report "attention"; no receipt).
	m.TelemetrySources = append(m.TelemetrySources, contract.TelemetrySource{Source: "attention.hook", Support: contract.SupportNative})
	// Usage under `lifeloop run`: each call's tokens from the database's
	// completed assistant messages, with the cost OpenCode priced them at
	// (TestUsageEverywhere: ledger, views and backends, priced and
	// unpriced).
	adapters.RaiseUsage(&m, true)
	return m
}

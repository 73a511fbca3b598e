package adapters

import (
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
)

// codex is OpenAI's Codex CLI (npm @openai/codex; measured: 0.169.0).
func codex() *Adapter {
	return &Adapter{
		ID:          "codex",
		DisplayName: "Codex",
		Conformance: ConformanceV1,
		Evidence: withEvidence(map[string]string{
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
			// From the rollout (launcher/telemetry.go).
			"lifecycle_events.frame.opening/launcher_wrapper":             "TestRunCodexTelemetry",
			"lifecycle_events.frame.opened/launcher_wrapper":              "TestRunCodexTelemetry",
			"lifecycle_events.frame.ending/launcher_wrapper":              "TestRunCodexTelemetry",
			"lifecycle_events.context.pressure_observed/launcher_wrapper": "TestRunCodexTelemetry",
			"lifecycle_events.context.compacted/launcher_wrapper":         "TestRunCodexCompactionTelemetry",
			"lifecycle_events.capability.degraded/launcher_wrapper":       "TestTelemetryDegradation",
			"context_pressure":                    "TestRunCodexTelemetry",
			"session_identity.harness_session_id": "TestRunCodexTelemetry",
			"telemetry_sources.rollout":           "TestRunCodexTelemetry",
			// lifeloop watch (launcher/watch.go).
			"lifecycle_events.frame.opening/telemetry_only":             "TestWatchCodex",
			"lifecycle_events.frame.opened/telemetry_only":              "TestWatchCodex",
			"lifecycle_events.frame.ending/telemetry_only":              "TestWatchCodex",
			"lifecycle_events.context.pressure_observed/telemetry_only": "TestWatchCodex",
		}),
		ExitCommand:   "/quit",
		TelemetryKind: "codex",
		names:         []string{"codex", "@openai/codex"},
		manifest: func() contract.AdapterManifest {
			m := wrapperManifest("codex", "Codex", contract.RolePrimaryWorker)
			// Under `lifeloop run` the notify program set for the launch
			// (-c notify=[...]) reports each turn's end natively.
			raise(m, contract.EventFrameEnded, contract.SupportNative, contract.ModeLauncherWrapper)
			// Without `lifeloop run`, hooks installed by `lifeloop host
			// apply` (once trusted) and the notify program report the
			// session and its turns (native_hook).
			addMode(&m, contract.ModeNativeHook)
			for _, e := range []contract.Event{contract.EventSessionStarted, contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventSessionEnding} {
				raise(m, e, contract.SupportNative, contract.ModeNativeHook)
			}
			// From the rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl):
			// task_started → frame.opening/opened, task_complete →
			// frame.ending (frame.ended is native through notify),
			// pressure, compaction, the thread id, degradation of the
			// source. Raising frame.opening/opened/ending as synthesized
			// in launcher_wrapper lowers their native_hook claim to
			// synthesized too (one support state per event).
			for _, e := range []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding} {
				raise(m, e, contract.SupportSynthesized, contract.ModeLauncherWrapper)
			}
			raiseWatch(&m, contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventContextPressureObserved)
			raiseTelemetry(&m, "rollout", "lifeloop run follows the rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl): context in use = last_token_usage.total_tokens of each token_count, against its model_context_window (Codex's effective window); receipts on level changes and compactions")
			// pre_session: -c developer_instructions=… at launch.
			m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportNative, MaxBytes: contract.Ptr(hookPlacementMaxBytes)}
			// `lifeloop renew` stops the harness and starts it again on the
			// same terminal with the continuation payload placed at launch.
			m.Renewal.Reset.WrapperMediated = contract.SupportSynthesized
			m.Renewal.Continuation.Observation = contract.SupportSynthesized
			m.Renewal.Continuation.PayloadDelivery = contract.SupportSynthesized
			m.Renewal.Profiles = []string{"lifeloop-wrapper"}
			m.Renewal.Evidence = contract.Ptr("lifeloop run stops the harness (exit command, then signals) and relaunches it on the same terminal with the continuation payload placed at launch; proven against the real binary")
			return m
		},
		prepare: codexPrepare,
	}
}

// codexTUISubcommands are the Codex 0.169 subcommands that open the
// interactive TUI (and with it, by default, a detached app-server daemon
// that outlives the TUI). Every other subcommand (exec, review, login,
// mcp, ...) starts no daemon.
var codexTUISubcommands = map[string]bool{"resume": true, "fork": true, "agents": true}

// codexSubcommands are every Codex 0.169 subcommand and alias, from
// `codex --help`. A first positional argument that is not one of these is
// the interactive session's initial prompt.
var codexSubcommands = map[string]bool{
	"agents": true, "exec": true, "e": true, "review": true, "login": true,
	"logout": true, "mcp": true, "plugin": true, "app-server": true,
	"remote-control": true, "completion": true, "update": true, "doctor": true,
	"sandbox": true, "debug": true, "apply": true, "a": true, "resume": true,
	"queue": true, "archive": true, "delete": true, "migrate-rollouts": true,
	"migrate-nfs-db": true, "unarchive": true, "fork": true, "cloud": true,
	"exec-server": true, "features": true, "help": true,
}

// codexValueOptions are Codex's global options that take a separate value.
var codexValueOptions = map[string]bool{
	"-c": true, "--config": true, "--enable": true, "--disable": true,
	"--remote": true, "--remote-auth-token-env": true, "--local-provider": true,
	"-m": true, "--model": true, "-p": true, "--profile": true,
	"-s": true, "--sandbox": true, "-C": true, "--cd": true,
	"--add-dir": true, "-a": true, "--ask-for-approval": true,
}

// codexPrepare adds --no-daemon to a Codex launch that opens the
// interactive TUI — no subcommand (optionally an initial prompt), or one
// of resume, fork, agents — so the session's processes stay inside the
// process group lifeloop supervises instead of leaving a detached
// app-server daemon behind. The flag goes right after the program
// (`codex --no-daemon …`), where Codex 0.169 accepts it for the TUI and
// for those subcommands. Nothing is added when the user already chose:
// --no-daemon, or --remote (the TUI then talks to that server).
//
// `-i/--image FILE...` takes every following non-option word, as Codex's
// parser does, so a positional after it is never read as a subcommand.
func codexPrepare(argv []string, argStart int) []string {
	args := argv[argStart:]
	interactive := true
scan:
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--no-daemon", a == "--remote", strings.HasPrefix(a, "--remote="):
			return argv
		case a == "--":
			break scan
		case a == "-i" || a == "--image":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
		case codexValueOptions[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			if codexSubcommands[a] {
				interactive = codexTUISubcommands[a]
			}
			// Either a subcommand or the initial prompt: later words
			// belong to them.
			for _, rest := range args[i+1:] {
				if rest == "--no-daemon" || rest == "--remote" || strings.HasPrefix(rest, "--remote=") {
					return argv
				}
			}
			break scan
		}
	}
	if !interactive {
		return argv
	}
	return slices.Insert(argv, argStart, "--no-daemon")
}

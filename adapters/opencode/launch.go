package opencode

import (
	"slices"
	"strings"
	"syscall"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
)

// Launch placement and relaunch (measured with 1.18.33 and the loopback
// mock model):
//
//	opencode -s ID           the TUI continues session ID (-c: the most recent one)
//	opencode                 the TUI, a new session at the first prompt
//	/exit + Enter            ends the TUI, exit code 0
//	--prompt TEXT            submitted as the first prompt of a new session only:
//	                         with -s or -c it is not sent
//	OPENCODE_CONFIG_CONTENT  configuration merged over the user's; its
//	                         "instructions" (files) are added to the user's
//	                         and read into the system prompt of every model
//	                         request, in a new or a continued session
//
// So a continuation payload goes into the system prompt (pre_session)
// through a private file named in OPENCODE_CONFIG_CONTENT's
// instructions. PlaceAtLaunch puts the envelope in an `env` assignment of
// its own (payloadVar) in front of the program, which
// ExternalizePlacement — run by lifeloop before every start — turns into
// the file, and the assignment into the harness's OPENCODE_CONFIG_CONTENT
// (the user's own, and the hook bridge's plugin, with the file added:
// mergeConfig), set in its environment: neither the body nor the user's
// configuration reaches the process table or the session record.

// payloadVar carries the envelope from PlaceAtLaunch to
// ExternalizePlacement.
const payloadVar = "LIFELOOP_OPENCODE_PAYLOAD"

// configVar is OpenCode's inline configuration variable.
const configVar = "OPENCODE_CONFIG_CONTENT"

// valueOptions are the default command's options that take a value.
var valueOptions = map[string]bool{
	"--log-level": true, "--port": true, "--hostname": true, "--mdns-domain": true, "--cors": true,
	"-m": true, "--model": true, "-s": true, "--session": true, "--prompt": true, "--agent": true,
	"--replay-limit": true,
}

// subcommands are OpenCode 1.18.33's commands other than the default TUI.
var subcommands = map[string]bool{
	"completion": true, "acp": true, "mcp": true, "attach": true, "run": true, "debug": true,
	"providers": true, "auth": true, "agent": true, "upgrade": true, "uninstall": true, "serve": true,
	"web": true, "models": true, "stats": true, "export": true, "import": true, "github": true,
	"pr": true, "session": true, "plugin": true, "plug": true, "db": true,
}

// command returns the subcommand of args ("" for the TUI) and whether
// args ask for help or the version (no session).
func command(args []string) (sub string, info bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return sub, info
		case a == "-h" || a == "--help" || a == "-v" || a == "--version":
			info = true
		case strings.HasPrefix(a, "-"):
			if valueOptions[a] {
				i++
			}
		case sub == "" && subcommands[a]:
			return a, info
		default:
			return sub, info // the project positional
		}
	}
	return sub, info
}

// startsSession reports whether args start a session that reads the
// configuration's instructions: the TUI or `run`.
func startsSession(args []string) bool {
	sub, info := command(args)
	return !info && (sub == "" || sub == "run")
}

// ReadyText implements adapters.InputReadyText: the footer's command
// hint, drawn with the prompt once the TUI takes keys (measured: the
// first key taken 3.3 s after the start, the footer drawn at 3.35 s; left
// canonical mode at 1.7 s on a resume, before it took keys).
func (Harness) ReadyText() string { return "ctrl+p" }

// StopSignal implements adapters.Relauncher: the OpenCode TUI ends on
// SIGTERM with exit code 0, from an empty prompt, a draft or an open
// permission dialog alike (e2e/renew_safe_test.go).
func (Harness) StopSignal() syscall.Signal { return syscall.SIGTERM }

// RelaunchArgv implements adapters.Relauncher for the TUI: options that
// pick a session (-c, -s ID, --fork) are removed; to resume, `-s ID` goes
// first and --prompt (already sent) is dropped; a fresh start keeps it.
// Subcommands (`run` included: it ends by itself) have no relaunch path.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	if start <= 0 || start > len(argv) || (resume && id == "") {
		return slices.Clone(argv), false
	}
	args := argv[start:]
	if sub, info := command(args); sub != "" || info {
		return slices.Clone(argv), false
	}
	out := slices.Clone(argv[:start])
	if resume {
		out = append(out, "-s", id)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, inline := strings.Cut(a, "=")
		switch {
		case a == "--":
			out = append(out, args[i:]...)
			return out, true
		case name == "-c" || name == "--continue" || name == "--fork":
		case name == "-s" || name == "--session":
			if !inline {
				i++
			}
		case name == "--prompt" && resume:
			if !inline {
				i++
			}
		case valueOptions[name] && !inline && i+1 < len(args):
			out = append(out, a, args[i+1])
			i++
		default:
			out = append(out, a)
		}
	}
	return out, true
}

// PlaceAtLaunch implements adapters.LaunchPlacer: target pre_session,
// the envelope in `env LIFELOOP_OPENCODE_PAYLOAD=TEXT` in front of the
// program (see ExternalizePlacement). A second placement joins the first
// with a blank line.
func (Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	return kit.PlaceEnvPayload(argv, start, payloadVar, text, start > 0 && start <= len(argv) && startsSession(argv[start:]))
}

// ExternalizePlacement implements adapters.PlacementExternalizer: the
// envelope in LIFELOOP_OPENCODE_PAYLOAD goes into the file files.Write
// returns, added to the "instructions" of the OPENCODE_CONFIG_CONTENT in
// files.Env (mergeConfig), which files.Setenv sets for the harness; the
// assignment leaves the command line (with the `env` in front of it when
// nothing else is assigned there). Without Setenv the merged value takes
// the assignment's place; a command line that assigns OPENCODE_CONFIG_CONTENT
// itself (which would override the environment) gets the file added to
// that assignment. A user's value that is not a JSON object is an error:
// lifeloop neither replaces nor shadows it.
func (Harness) ExternalizePlacement(argv []string, start int, files adapters.PlacementFiles) ([]string, error) {
	for i := 0; i < start && i < len(argv); i++ {
		text, ok := strings.CutPrefix(argv[i], payloadVar+"=")
		if !ok {
			continue
		}
		// The user's own value: an assignment of the command line (which
		// would override the environment), else the environment's.
		user, own := adapters.EnvValue(files.Env, configVar), -1
		for j := 0; j < start && j < len(argv); j++ {
			if v, ok := strings.CutPrefix(argv[j], configVar+"="); ok {
				user, own = v, j
			}
		}
		if _, err := mergeConfig(user, nil); err != nil {
			return argv, err
		}
		path, err := files.Write(text)
		if err != nil {
			return argv, err
		}
		cfg, err := mergeConfig(user, map[string][]string{"instructions": {path}})
		if err != nil {
			return argv, err
		}
		out := slices.Clone(argv)
		switch {
		case own >= 0:
			out[own] = configVar + "=" + cfg
		case files.Setenv == nil:
			out[i] = configVar + "=" + cfg
			return out, nil
		default:
			files.Setenv(configVar, cfg)
		}
		if i == 1 && out[0] == "env" && (len(out) < 3 || !strings.Contains(out[2], "=")) {
			return out[2:], nil
		}
		return slices.Delete(out, i, i+1), nil
	}
	return argv, nil
}

var (
	_ adapters.Relauncher            = Harness{}
	_ adapters.LaunchPlacer          = Harness{}
	_ adapters.PlacementExternalizer = Harness{}
)

// runValueOptions are `opencode run`'s own options that take a value.
var runValueOptions = map[string]bool{
	"-f": true, "--file": true, "--format": true, "--title": true, "--attach": true,
	"--variant": true, "--command": true, "--dir": true,
}

// ResumedSession implements adapters.SessionResumer: `-s/--session ID`
// continues session ID and `-c/--continue` the most recently updated
// session of the folder, in the TUI and in `run` alike (measured: the
// same session id, its rows appended to); with --fork the continuation
// is a new session (a copy), followed as a new one.
func (Harness) ResumedSession(argv []string, start int) (string, bool) {
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return "", false
	}
	args := argv[start:]
	var id string
	var resumed, fork bool
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		switch {
		case args[i] == "--":
			i = len(args)
		case name == "--fork":
			fork = true
		case name == "-c" || name == "--continue":
			resumed = true
		case name == "-s" || name == "--session":
			if !inline && i+1 < len(args) {
				i++
				value = args[i]
			}
			id, resumed = value, value != ""
		case (valueOptions[name] || runValueOptions[name]) && !inline:
			i++
		}
	}
	if !resumed || fork {
		return "", false
	}
	return id, true
}

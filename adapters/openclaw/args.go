package openclaw

import (
	"slices"
	"strings"
)

// OpenClaw's command line (2026.9.6): `openclaw [global options] COMMAND
// ...`. Global options: --dev and --profile NAME move the state and
// configuration folders (~/.openclaw-dev, ~/.openclaw-NAME), --container
// NAME runs the command in a container, --log-level LEVEL and --no-color.

// globalValued are the global options that take a value.
var globalValued = map[string]bool{"--profile": true, "--container": true, "--log-level": true}

// command splits args (the harness's arguments) into the global options
// before the command, the command, and its arguments; cmd is "" when
// there is none.
func command(args []string) (global []string, cmd string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return args[:i], a, args[i+1:]
		}
		if globalValued[a] {
			i++
		}
	}
	return args, "", nil
}

// movesFolders reports global options that choose other state or
// configuration folders than the environment names (or another machine).
func movesFolders(global []string) bool {
	return slices.ContainsFunc(global, func(a string) bool {
		name, _, _ := strings.Cut(a, "=")
		return name == "--dev" || name == "--profile" || name == "--container"
	})
}

// asksHelp reports --help, -h, --version or -V among args.
func asksHelp(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" || a == "-V" || a == "--version" })
}

// isLocalAgent reports a command line running one embedded agent turn:
// `agent --local` (not `agent exec`, which keeps no plugin registry, nor
// `agent` without --local, which hands the turn to a Gateway).
func isLocalAgent(args []string) bool {
	_, cmd, rest := command(args)
	if cmd != "agent" || asksHelp(args) || (len(rest) > 0 && rest[0] == "exec") {
		return false
	}
	return slices.ContainsFunc(rest, func(a string) bool { return a == "--local" || a == "--local=true" })
}

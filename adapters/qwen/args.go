package qwen

import "github.com/lifeloop/lifeloop/adapters"

// Qwen Code's command line, as `qwen --help` gives it (0.24.4): yargs
// options, `--name=value` or `--name value`; an array option takes every
// word up to the next option.

// option is what lifeloop knows about one Qwen Code option.
type option struct {
	arity adapters.Arity
	// picksSession: the option chooses the session (resume one, the
	// latest, fork, or name a new one's id); one-shot, so a relaunch
	// drops it and a launch that has one is not pinned.
	picksSession bool
	// noSession: the option prints something and exits, or serves a
	// protocol rather than a session of its own.
	noSession bool
}

// options is the one table of Qwen Code options lifeloop reads; an
// option missing from it takes no value.
var options = map[string]option{
	"-m": {arity: adapters.Required}, "--model": {arity: adapters.Required}, "--fallback-model": {arity: adapters.Variadic},
	"-p": {arity: adapters.Required}, "--prompt": {arity: adapters.Required},
	"-i": {arity: adapters.Required}, "--prompt-interactive": {arity: adapters.Required},
	"--system-prompt": {arity: adapters.Required}, "--append-system-prompt": {arity: adapters.Required},
	"--output-style": {arity: adapters.Required}, "--sandbox-image": {arity: adapters.Required},
	"--approval-mode": {arity: adapters.Required}, "--channel": {arity: adapters.Required},
	"--allowed-mcp-server-names": {arity: adapters.Variadic}, "--mcp-config": {arity: adapters.Required},
	"--allowed-tools": {arity: adapters.Variadic}, "-e": {arity: adapters.Variadic}, "--extensions": {arity: adapters.Variadic},
	"--include-directories": {arity: adapters.Variadic}, "--add-dir": {arity: adapters.Variadic},
	"--openai-logging-dir": {arity: adapters.Required}, "--openai-api-key": {arity: adapters.Required},
	"--openai-base-url": {arity: adapters.Required}, "--input-format": {arity: adapters.Required},
	"-o": {arity: adapters.Required}, "--output-format": {arity: adapters.Required},
	"--json-fd": {arity: adapters.Required}, "--json-file": {arity: adapters.Required},
	"--json-schema": {arity: adapters.Required}, "--input-file": {arity: adapters.Required},
	"--worktree": {arity: adapters.Optional}, "--max-session-turns": {arity: adapters.Required},
	"--max-wall-time": {arity: adapters.Required}, "--max-tool-calls": {arity: adapters.Required},
	"--max-subagent-depth": {arity: adapters.Required}, "--core-tools": {arity: adapters.Variadic},
	"--exclude-tools": {arity: adapters.Variadic}, "--disabled-slash-commands": {arity: adapters.Variadic},
	"--auth-type": {arity: adapters.Required}, "--proxy": {arity: adapters.Required},
	"--telemetry-target": {arity: adapters.Required}, "--telemetry-otlp-endpoint": {arity: adapters.Required},
	"--telemetry-otlp-protocol": {arity: adapters.Required}, "--telemetry-outfile": {arity: adapters.Required},

	"-r": {arity: adapters.Optional, picksSession: true}, "--resume": {arity: adapters.Optional, picksSession: true},
	"-c": {picksSession: true}, "--continue": {picksSession: true},
	"--session-id": {arity: adapters.Required, picksSession: true}, "--fork-session": {picksSession: true},

	"-h": {noSession: true}, "--help": {noSession: true}, "-v": {noSession: true}, "--version": {noSession: true},
	"-l": {noSession: true}, "--list-extensions": {noSession: true}, "--acp": {noSession: true},
}

// subcommands are Qwen Code's commands: none of them starts a session of
// its own. Any other first positional word is the prompt of a one-shot.
var subcommands = map[string]bool{
	"auth": true, "board": true, "channel": true, "extensions": true, "hooks": true, "mcp": true,
	"review": true, "sandbox": true, "serve": true, "sessions": true, "update": true,
}

// Options lifeloop adds or looks for.
const (
	sessionIDFlag = "--session-id"
	resumeFlag    = "--resume"
	interactive   = "--prompt-interactive"
	interShort    = "-i"
)

func parseArgs(args []string) []adapters.Arg {
	return adapters.ScanArgs(args, func(name string) adapters.Arity { return options[name].arity })
}

// startsSession reports whether Qwen Code arguments start (or resume) a
// session: no subcommand first, no --help/--version/--acp.
func startsSession(args []string) bool {
	for _, ca := range parseArgs(args) {
		if ca.Positional {
			return !subcommands[ca.Words[0]]
		}
		if options[ca.Option].noSession {
			return false
		}
	}
	return true
}

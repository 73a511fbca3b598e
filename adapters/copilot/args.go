package copilot

import (
	"github.com/lifeloop/lifeloop/adapters"
)

// GitHub Copilot CLI's command line, as `copilot --help` gives it
// (1.0.102): Commander-like options, `--name=value` or `--name value`.

// option is what lifeloop knows about one Copilot CLI option.
type option struct {
	arity adapters.Arity
	// picksSession: the option chooses the session (resume one, the
	// latest, or name a new one's id); one-shot, so a relaunch drops it
	// and a launch that has one is not pinned.
	picksSession bool
	// noSession: the option prints something and exits.
	noSession bool
}

// options is the one table of Copilot CLI options lifeloop reads; an
// option missing from it takes no value.
var options = map[string]option{
	"-p": {arity: adapters.Required}, "--prompt": {arity: adapters.Required},
	"-i": {arity: adapters.Required}, "--interactive": {arity: adapters.Required},
	"--model": {arity: adapters.Required}, "--reasoning-effort": {arity: adapters.Required},
	"--context": {arity: adapters.Required}, "--auto-tier": {arity: adapters.Required},
	"--agent": {arity: adapters.Required}, "-n": {arity: adapters.Required}, "--name": {arity: adapters.Required},
	"-C": {arity: adapters.Required}, "--log-dir": {arity: adapters.Required}, "--log-level": {arity: adapters.Required},
	"--extension-sdk-path": {arity: adapters.Required}, "--stream": {arity: adapters.Required},
	"--output-format": {arity: adapters.Required}, "--share": {arity: adapters.Optional},
	"--add-dir": {arity: adapters.Required}, "--attachment": {arity: adapters.Required},
	"--disable-mcp-server": {arity: adapters.Required}, "--enable-mcp-server": {arity: adapters.Required},
	"--add-github-mcp-toolset": {arity: adapters.Required}, "--add-github-mcp-tool": {arity: adapters.Required},
	"--plugin-dir": {arity: adapters.Required}, "--additional-mcp-config": {arity: adapters.Required},
	"--mcp-github-auth": {arity: adapters.Required}, "--max-autopilot-continues": {arity: adapters.Required},
	"--mode": {arity: adapters.Required}, "--environment-host": {arity: adapters.Required},
	"--environment-compute-id": {arity: adapters.Required}, "--dynamic-retrieval": {arity: adapters.Required},
	"--max-ai-credits": {arity: adapters.Required}, "--usage-output-file": {arity: adapters.Required},
	"--bash-env": {arity: adapters.Optional}, "--mouse": {arity: adapters.Optional},
	"--allow-tool": {arity: adapters.Variadic}, "--deny-tool": {arity: adapters.Variadic},
	"--available-tools": {arity: adapters.Variadic}, "--excluded-tools": {arity: adapters.Variadic},
	"--secret-env-vars": {arity: adapters.Variadic}, "--allow-url": {arity: adapters.Variadic},
	"--deny-url": {arity: adapters.Variadic},

	"-r": {arity: adapters.Optional, picksSession: true}, "--resume": {arity: adapters.Optional, picksSession: true},
	"--continue": {picksSession: true}, "--session-id": {arity: adapters.Required, picksSession: true},
	"--connect": {arity: adapters.Optional, picksSession: true},

	"-h": {noSession: true}, "--help": {noSession: true}, "-v": {noSession: true}, "--version": {noSession: true},
	"--acp": {noSession: true},
}

// subcommands are Copilot CLI's commands: none of them starts a session.
var subcommands = map[string]bool{
	"app": true, "login": true, "help": true, "init": true, "config": true, "update": true, "version": true,
	"workflow": true, "sessions": true, "memories": true, "plugin": true, "mcp": true, "skill": true,
	"instruction": true, "lsp": true, "sandbox": true, "completion": true,
}

// Options lifeloop adds or looks for.
const (
	sessionIDFlag = "--session-id"
	resumeFlag    = "--resume"
	continueFlag  = "--continue"
	promptFlag    = "--prompt"
	promptShort   = "-p"
	interactive   = "--interactive"
	interShort    = "-i"
)

func parseArgs(args []string) []adapters.Arg {
	return adapters.ScanArgs(args, func(name string) adapters.Arity { return options[name].arity })
}

// startsSession reports whether Copilot CLI arguments start (or resume) a
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

// optionValue is the value of an option (its next word, or after "=");
// "" when none.
func optionValue(ca adapters.Arg) string {
	if len(ca.Words) == 2 {
		return ca.Words[1]
	}
	if _, v, ok := cut(ca.Words[0]); ok {
		return v
	}
	return ""
}

func cut(w string) (string, string, bool) {
	for i := 0; i < len(w); i++ {
		if w[i] == '=' {
			return w[:i], w[i+1:], true
		}
	}
	return w, "", false
}

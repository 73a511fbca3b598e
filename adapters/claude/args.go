package claude

import (
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
)

// Claude Code's command line, as Commander reads it (`claude --help`,
// 2.1.197).

// arity is how many words follow an option (adapters.ScanArgs).
type arity = adapters.Arity

const (
	flagOnly = adapters.FlagOnly
	required = adapters.Required
	optional = adapters.Optional
	variadic = adapters.Variadic
)

// option is what lifeloop knows about one Claude Code option.
type option struct {
	arity arity
	// picksSession: the option chooses the conversation (resume, continue,
	// pin or fork one); one-shot, so a relaunch drops it, and a launch
	// that has one is not pinned.
	picksSession bool
}

// options is the one table of Claude Code options lifeloop reads; an
// option missing from it takes no value and picks no session.
var options = map[string]option{
	"--add-dir": {arity: variadic}, "--allowedTools": {arity: variadic}, "--allowed-tools": {arity: variadic},
	"--betas": {arity: variadic}, "--disallowedTools": {arity: variadic}, "--disallowed-tools": {arity: variadic},
	"--file": {arity: variadic}, "--mcp-config": {arity: variadic}, "--tools": {arity: variadic},

	"--agent": {arity: required}, "--agents": {arity: required}, "--append-system-prompt": {arity: required},
	"--append-system-prompt-file": {arity: required}, "--system-prompt": {arity: required},
	"--system-prompt-file": {arity: required}, "--debug-file": {arity: required}, "--effort": {arity: required},
	"--fallback-model": {arity: required}, "--input-format": {arity: required}, "--json-schema": {arity: required},
	"--max-budget-usd": {arity: required}, "--model": {arity: required}, "-n": {arity: required},
	"--name": {arity: required}, "--output-format": {arity: required}, "--permission-mode": {arity: required},
	"--plugin-dir": {arity: required}, "--plugin-url": {arity: required}, "--max-turns": {arity: required},
	"--remote-control-session-name-prefix": {arity: required}, "--setting-sources": {arity: required},
	"--settings": {arity: required}, "--system-prompt-snapshot": {arity: required},

	"-d": {arity: optional}, "--debug": {arity: optional}, "--prompt-suggestions": {arity: optional},
	"--remote-control": {arity: optional}, "-w": {arity: optional}, "--worktree": {arity: optional},

	"-r": {arity: optional, picksSession: true}, "--resume": {arity: optional, picksSession: true},
	"-c": {picksSession: true}, "--continue": {picksSession: true}, "--fork-session": {picksSession: true},
	"--session-id": {arity: required, picksSession: true}, "--from-pr": {arity: optional, picksSession: true},
}

// subcommands are Claude Code's subcommands: none of them starts a
// conversation.
var subcommands = map[string]bool{
	"agents": true, "auth": true, "auto-mode": true, "config": true, "doctor": true, "install": true,
	"mcp": true, "plugin": true, "plugins": true, "setup-token": true, "update": true, "upgrade": true,
	"migrate-installer": true,
}

// Options lifeloop adds or looks for.
const (
	appendPromptFlag     = "--append-system-prompt"
	appendPromptFileFlag = "--append-system-prompt-file"
	sessionIDFlag        = "--session-id"
	resumeFlag           = "--resume"
	settingsFlag         = "--settings"
	snapshotFlag         = "--system-prompt-snapshot"
)

// parseArgs splits Claude arguments into options (with their values)
// and positionals.
func parseArgs(args []string) []adapters.Arg {
	return adapters.ScanArgs(args, func(name string) arity { return options[name].arity })
}

// startsSession reports whether Claude arguments start a conversation (no
// subcommand, not --help/--version).
func startsSession(args []string) bool {
	for _, ca := range parseArgs(args) {
		switch {
		case ca.Option == "-h" || ca.Option == "--help" || ca.Option == "-v" || ca.Option == "--version":
			return false
		case ca.Positional:
			return !subcommands[ca.Words[0]]
		}
	}
	return true
}

// isPrint reports whether parsed arguments run in print mode (-p).
func isPrint(args []adapters.Arg) bool {
	for _, ca := range args {
		if ca.Option == "-p" || ca.Option == "--print" {
			return true
		}
	}
	return false
}

// ResumedSession implements adapters.SessionResumer: `-r/--resume ID`
// (a session id; any other value is the picker's search term) continues
// that conversation and `-c/--continue` the folder's most recent one,
// written on to the same transcript; with --fork-session, or with the
// interactive picker, the session is not known from the command line.
func (Harness) ResumedSession(argv []string, start int) (string, bool) {
	if !validStart(argv, start) || !startsSession(argv[start:]) {
		return "", false
	}
	var id string
	resumed := false
	for _, ca := range parseArgs(argv[start:]) {
		switch ca.Option {
		case "--fork-session", "--session-id", "--from-pr":
			return "", false
		case "-c", "--continue":
			resumed = true
		case "-r", "--resume":
			value := ""
			if _, v, ok := strings.Cut(ca.Words[0], "="); ok {
				value = v
			} else if len(ca.Words) > 1 {
				value = ca.Words[1]
			}
			if !adapters.IsUUID(value) {
				return "", false
			}
			id, resumed = value, true
		}
	}
	return id, resumed
}

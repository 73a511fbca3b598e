package gemini

import (
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

// Gemini CLI's command line, as yargs reads it (`gemini --help`, 0.61.0).

// arity is how many words follow an option (adapters.ScanArgs).
type arity = adapters.Arity

const (
	flagOnly = adapters.FlagOnly
	required = adapters.Required
	optional = adapters.Optional
	variadic = adapters.Variadic
)

// option is what lifeloop knows about one Gemini CLI option.
type option struct {
	arity arity
	// picksSession: the option chooses the session (resume one, load one
	// from a file, or name a new one); a launch that has one is not
	// pinned.
	picksSession bool
	// noSession: the option lists or deletes something and exits.
	noSession bool
}

// options is the one table of Gemini CLI options lifeloop reads; an option
// missing from it takes no value.
var options = map[string]option{
	"-m": {arity: required}, "--model": {arity: required}, "-p": {arity: required}, "--prompt": {arity: required},
	"-i": {arity: required}, "--prompt-interactive": {arity: required}, "--approval-mode": {arity: required},
	"-o": {arity: required}, "--output-format": {arity: required},
	"-w": {arity: optional}, "--worktree": {arity: optional},

	"--policy": {arity: variadic}, "--admin-policy": {arity: variadic}, "--allowed-mcp-server-names": {arity: variadic},
	"--allowed-tools": {arity: variadic}, "-e": {arity: variadic}, "--extensions": {arity: variadic},
	"--include-directories": {arity: variadic},

	"-r": {arity: optional, picksSession: true}, "--resume": {arity: optional, picksSession: true},
	"--session-file": {arity: required, picksSession: true}, "--session-id": {arity: required, picksSession: true},

	"--delete-session": {arity: required, noSession: true}, "--list-sessions": {noSession: true},
	"-l": {noSession: true}, "--list-extensions": {noSession: true},
	"-h": {noSession: true}, "--help": {noSession: true}, "-v": {noSession: true}, "--version": {noSession: true},
}

// subcommands are Gemini CLI's commands: none of them starts a session.
var subcommands = map[string]bool{
	"mcp": true, "extensions": true, "extension": true, "skills": true, "skill": true,
	"hooks": true, "hook": true, "gemma": true,
}

// Options lifeloop adds or looks for.
const (
	sessionIDFlag = "--session-id"
)

// parseArgs splits Gemini CLI arguments into options (with their values)
// and positionals.
func parseArgs(args []string) []adapters.Arg {
	return adapters.ScanArgs(args, func(name string) arity { return options[name].arity })
}

// startsSession reports whether Gemini CLI arguments start a chat session
// (no subcommand, nothing that lists or deletes and exits).
func startsSession(args []string) bool {
	first := true
	for _, ca := range parseArgs(args) {
		switch {
		case options[ca.Option].noSession:
			return false
		case ca.Positional && first && subcommands[ca.Words[0]]:
			return false
		case ca.Positional:
			first = false
		}
	}
	return true
}

// headless reports whether the arguments run one prompt and exit:
// -p/--prompt without -i/--prompt-interactive.
func headless(args []string) bool {
	prompt := false
	for _, ca := range parseArgs(args) {
		switch ca.Option {
		case promptFlag, promptShort:
			prompt = true
		case interactiveFlag, interactiveShrt:
			return false
		}
	}
	return prompt
}

// picksSession reports whether the arguments already choose the session.
func picksSession(args []string) bool {
	for _, ca := range parseArgs(args) {
		if options[ca.Option].picksSession {
			return true
		}
	}
	return false
}

// PinSession implements adapters.SessionPinner: a command line that starts
// an interactive session without choosing one gets `--session-id <new
// uuid>` at its first own argument. Gemini CLI names the chat file after
// the id's first 8 characters and records the id on its first line, so
// telemetry finds exactly this launch's file.
//
// A headless prompt (-p) is not pinned: with --session-id, Gemini CLI
// 0.61 reads its project registry (~/.gemini/projects.json) under a file
// lock while its start-up cleanup holds the same lock, and waits for it
// in steps of 100 ms and more: a one-shot took 1.09× the time of the same
// prompt without the flag (8 alternated pairs). Its chat file is found
// like any other launch's, by the working folder's hash in its first line
// and its birth after the launch (TestRunGeminiTelemetry).
func (Harness) PinSession(argv []string, start int) ([]string, string) {
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) || picksSession(argv[start:]) || headless(argv[start:]) {
		return argv, ""
	}
	id := kit.NewUUID()
	return adapters.InsertArgs(argv, []string{sessionIDFlag, id}), id
}

// ResumedSession implements adapters.SessionResumer: `-r/--resume` with
// no value or `latest` continues the project's most recent session, with
// a session id that session, appended to its chat file (measured: same
// session id, same file, a second header line); an index (`-r 3`) and
// --session-file are not read here: followed as a new session.
func (Harness) ResumedSession(argv []string, start int) (string, bool) {
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return "", false
	}
	for _, ca := range parseArgs(argv[start:]) {
		switch ca.Option {
		case "--session-file", "--session-id":
			return "", false
		case "-r", "--resume":
			value := ""
			if _, v, ok := strings.Cut(ca.Words[0], "="); ok {
				value = v
			} else if len(ca.Words) > 1 {
				value = ca.Words[1]
			}
			switch {
			case value == "" || value == "latest":
				return "", true
			case adapters.IsUUID(value):
				return strings.ToLower(value), true
			}
			return "", false
		}
	}
	return "", false
}

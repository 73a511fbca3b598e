package pi

import "strings"

// Pi's command line, as its own parser reads it (dist/cli/args.js,
// 0.73.1): options are exact words (no --opt=value for its own options),
// -p takes the next word as the prompt unless it starts with - or @, an
// unknown --flag (an extension's) takes the next word unless it starts
// with - or @, a word starting with @ is a file to inline, and any other
// word is a prompt. `pi install|remove|uninstall|update|list|config` are
// package commands that start no session.

// arity is how many words follow an option.
type arity int

const (
	flagOnly arity = iota // no value
	required              // exactly one
	optional              // one unless the next word starts with - or @
)

// option is what lifeloop knows about one Pi option.
type option struct {
	arity arity
	// picksSession: the option chooses the session (continue, resume,
	// pin, fork, none, or where sessions live); one-shot, so a relaunch
	// drops it.
	picksSession bool
}

// options is the one table of Pi options lifeloop reads.
var options = map[string]option{
	"--provider": {arity: required}, "--model": {arity: required}, "--api-key": {arity: required},
	"--system-prompt": {arity: required}, "--append-system-prompt": {arity: required}, "--mode": {arity: required},
	"--models": {arity: required}, "--tools": {arity: required}, "-t": {arity: required},
	"--thinking": {arity: required}, "--export": {arity: required}, "--extension": {arity: required},
	"-e": {arity: required}, "--skill": {arity: required}, "--prompt-template": {arity: required},
	"--theme": {arity: required}, "--list-models": {arity: optional},
	"-p": {arity: optional}, "--print": {arity: optional},

	"--continue": {picksSession: true}, "-c": {picksSession: true},
	"--resume": {picksSession: true}, "-r": {picksSession: true},
	"--no-session": {picksSession: true},
	"--session":    {arity: required, picksSession: true}, "--fork": {arity: required, picksSession: true},
	"--session-dir": {arity: required, picksSession: true},
}

// subcommands are Pi's package commands: none starts a session.
var subcommands = map[string]bool{"install": true, "remove": true, "uninstall": true, "update": true, "list": true, "config": true}

// Options lifeloop adds or looks for.
const (
	appendPromptFlag = "--append-system-prompt"
	sessionFlag      = "--session"
	extensionFlag    = "--extension"
)

// arg is one parsed Pi argument: an option with its value, or a
// positional word (a prompt, or an @file).
type arg struct {
	words      []string
	option     string // "" for a positional
	positional bool
}

// parseArgs splits Pi arguments into options (with their values) and
// positionals, the way Pi reads them.
func parseArgs(args []string) []arg {
	var out []arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			out = append(out, arg{words: []string{a}, positional: true})
			continue
		}
		ca := arg{words: []string{a}, option: a}
		o, known := options[a]
		switch {
		case known && o.arity == required:
			if i+1 < len(args) {
				i++
				ca.words = append(ca.words, args[i])
			}
		case known && o.arity == optional, !known && strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			// -p PROMPT, --list-models SEARCH, an extension's --flag VALUE.
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.HasPrefix(args[i+1], "@") {
				i++
				ca.words = append(ca.words, args[i])
			}
		}
		out = append(out, ca)
	}
	return out
}

// startsSession reports whether Pi arguments start a session: no package
// command first, not --help/--version/--list-models/--export.
func startsSession(args []string) bool {
	if len(args) > 0 && subcommands[args[0]] {
		return false
	}
	for _, ca := range parseArgs(args) {
		switch ca.option {
		case "-h", "--help", "-v", "--version", "--list-models", "--export":
			return false
		}
	}
	return true
}

// isPrint reports whether parsed arguments run without the TUI (-p, or
// --mode json|rpc).
func isPrint(args []arg) bool {
	for _, ca := range args {
		if ca.option == "-p" || ca.option == "--print" || ca.option == "--mode" && len(ca.words) == 2 && ca.words[1] != "text" {
			return true
		}
	}
	return false
}

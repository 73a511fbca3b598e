package claude

import "strings"

// Claude Code's command line, as Commander reads it (`claude --help`,
// 2.1.197).

// arity is how many words follow an option.
type arity int

const (
	flagOnly arity = iota // no value
	required              // exactly one
	optional              // one unless the next word is an option
	variadic              // every word up to the next option
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
	"--settings": {arity: required},

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
)

// arg is one parsed Claude argument: an option with its values, or a
// positional word.
type arg struct {
	words      []string
	option     string // "" for a positional
	positional bool
}

// parseArgs splits Claude arguments into options (with their values) and
// positionals, the way Commander reads them.
func parseArgs(args []string) []arg {
	var out []arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for _, rest := range args[i:] {
				out = append(out, arg{words: []string{rest}, positional: rest != "--"})
			}
			return out
		case strings.HasPrefix(a, "-") && a != "-":
			name, _, inline := strings.Cut(a, "=")
			ca := arg{words: []string{a}, option: name}
			if !inline {
				switch options[name].arity {
				case required:
					if i+1 < len(args) {
						i++
						ca.words = append(ca.words, args[i])
					}
				case optional:
					if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						ca.words = append(ca.words, args[i])
					}
				case variadic:
					for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						ca.words = append(ca.words, args[i])
					}
				}
			}
			out = append(out, ca)
		default:
			out = append(out, arg{words: []string{a}, positional: true})
		}
	}
	return out
}

// startsSession reports whether Claude arguments start a conversation (no
// subcommand, not --help/--version).
func startsSession(args []string) bool {
	for _, ca := range parseArgs(args) {
		switch {
		case ca.option == "-h" || ca.option == "--help" || ca.option == "-v" || ca.option == "--version":
			return false
		case ca.positional:
			return !subcommands[ca.words[0]]
		}
	}
	return true
}

// isPrint reports whether parsed arguments run in print mode (-p).
func isPrint(args []arg) bool {
	for _, ca := range args {
		if ca.option == "-p" || ca.option == "--print" {
			return true
		}
	}
	return false
}

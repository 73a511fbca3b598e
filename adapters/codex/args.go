package codex

import "strings"

// Codex's command line, from `codex --help` and its subcommands' help
// (0.169): root options, then a subcommand or the TUI's initial prompt,
// then that subcommand's own arguments. Everything here that reads Codex
// arguments goes through optionEnd (how many words an option takes) and
// rootArgs (where the root options end).

// tuiSubcommands are the subcommands that open the interactive TUI (and
// with it, by default, a detached app-server daemon that outlives the
// TUI). Every other subcommand (exec, review, login, mcp, ...) starts no
// daemon.
var tuiSubcommands = map[string]bool{"resume": true, "fork": true, "agents": true}

// subcommands are every subcommand and alias. A first positional argument
// that is not one of these is the interactive session's initial prompt.
var subcommands = map[string]bool{
	"agents": true, "exec": true, "e": true, "review": true, "login": true,
	"logout": true, "mcp": true, "plugin": true, "app-server": true,
	"remote-control": true, "completion": true, "update": true, "doctor": true,
	"sandbox": true, "debug": true, "apply": true, "a": true, "resume": true,
	"queue": true, "archive": true, "delete": true, "migrate-rollouts": true,
	"migrate-nfs-db": true, "unarchive": true, "fork": true, "cloud": true,
	"exec-server": true, "features": true, "help": true,
}

// valueOptions are the global options that take a separate value.
var valueOptions = map[string]bool{
	"-c": true, "--config": true, "--enable": true, "--disable": true,
	"--remote": true, "--remote-auth-token-env": true, "--local-provider": true,
	"-m": true, "--model": true, "-p": true, "--profile": true,
	"-s": true, "--sandbox": true, "-C": true, "--cd": true,
	"--add-dir": true, "-a": true, "--ask-for-approval": true,
}

// execValueOptions are `codex exec` options that take a separate value,
// besides the global ones.
var execValueOptions = map[string]bool{"-o": true, "--output-last-message": true, "--output-schema": true, "--color": true}

// optionEnd returns the index of the last word of the option args[i]: i
// for a flag; i+1 for an option that takes a separate value (a global
// one, or with exec also an exec one), when a word follows; and for
// `-i/--image FILE...` the last of the non-option words after it, which
// Codex's parser takes all, so a positional after it is never read as a
// subcommand.
func optionEnd(args []string, i int, exec bool) int {
	switch a := args[i]; {
	case a == "-i" || a == "--image":
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
		}
	case valueOptions[a] || exec && execValueOptions[a]:
		if i+1 < len(args) {
			i++
		}
	}
	return i
}

// rootArgs splits Codex arguments where the root options end: the option
// words before the first positional (without their values), and the index
// of that positional (a subcommand or the TUI's prompt), or len(args) when
// there is none or `--` comes first.
func rootArgs(args []string) (opts []string, at int) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return opts, len(args)
		case strings.HasPrefix(a, "-"):
			opts = append(opts, a)
			i = optionEnd(args, i, false)
		default:
			return opts, i
		}
	}
	return opts, len(args)
}

// subcommand returns the first positional of Codex arguments when it is a
// subcommand ("" when there is none, or it is the TUI's prompt) and its
// index (len(args) when none).
func subcommand(args []string) (string, int) {
	_, at := rootArgs(args)
	if at < len(args) && subcommands[args[at]] {
		return args[at], at
	}
	return "", at
}

// positionalsAfter splits the arguments of a subcommand (or the TUI's
// words after its prompt) into options, kept in order with their values
// (global and exec ones), and positional words ("-" is one; every word
// after `--` is one).
func positionalsAfter(args []string) (opts, pos []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return opts, append(pos, args[i+1:]...)
		case strings.HasPrefix(a, "-") && a != "-":
			end := optionEnd(args, i, true)
			opts = append(opts, args[i:end+1]...)
			i = end
		default:
			pos = append(pos, a)
		}
	}
	return opts, pos
}

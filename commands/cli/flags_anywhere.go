package cli

import (
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// Commands whose arguments are never reordered: everything after run's
// first positional argument (or its --) is the harness's command line, and
// host-hook's arguments are whatever the harness passes its hook.
var keepArgOrder = []string{"run", "host-hook", "procwrap"}

// hoistFlags lets a command's flags come before or after its positional
// arguments, as `git` and `kubectl` accept: urfave/cli stops reading flags
// at the first positional argument, so the flags of the command line's
// (sub)command that follow one are moved in front of the positional
// arguments, keeping their order. A literal "--" ends the flags: it and
// what follows it stay positional, as does a lone "-" (standard input).
// Tokens that look like flags but are not the command's are moved too, so
// urfave reports them as unknown flags instead of taking them for
// positional arguments. args[0] is the program name.
func hoistFlags(app *ucli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// Find the (sub)command: the first non-flag tokens naming commands.
	i := 1
	for i < len(args) && isFlagToken(args[i]) {
		i++ // global flags (--help, --version) take no value
	}
	if i >= len(args) {
		return args
	}
	cmd := findCommand(app.Commands, args[i])
	if cmd == nil || slices.Contains(keepArgOrder, cmd.Name) {
		return args
	}
	i++
	for len(cmd.Subcommands) > 0 {
		j := i
		for j < len(args) && isFlagToken(args[j]) {
			j++
		}
		if j >= len(args) {
			return args
		}
		sub := findCommand(cmd.Subcommands, args[j])
		if sub == nil {
			return args
		}
		cmd, i = sub, j+1
	}
	var flags, positional []string
	rest := args[i:]
	for k := 0; k < len(rest); k++ {
		tok := rest[k]
		switch {
		case tok == "--":
			positional = append(positional, rest[k:]...)
			k = len(rest)
		case !isFlagToken(tok):
			positional = append(positional, tok)
		default:
			flags = append(flags, tok)
			if !strings.Contains(tok, "=") && takesValue(cmd, tok) && k+1 < len(rest) {
				k++
				flags = append(flags, rest[k])
			}
		}
	}
	if len(positional) == 0 || len(flags) == 0 {
		return args
	}
	if slices.ContainsFunc(flags, func(f string) bool { return f == "-h" || f == "--help" || f == "-help" }) {
		// `CMD ARG --help` asks for CMD's help (urfave would read the
		// argument after a leading --help as a help topic).
		return append(slices.Clone(args[:i]), "--help")
	}
	// The first positional token (an argument or "--") stops urfave's
	// flag parsing, exactly where the user's own "--" would have.
	out := slices.Clone(args[:i])
	out = append(out, flags...)
	return append(out, positional...)
}

// isFlagToken reports whether tok is written as a flag ("-x", "--name",
// "--name=value"); "-" alone is an argument (standard input).
func isFlagToken(tok string) bool {
	return len(tok) > 1 && tok[0] == '-'
}

// findCommand returns the command of cmds named or aliased name.
func findCommand(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the flag tok (without "=value") of cmd reads
// the next token as its value. Help and unknown flags take none.
func takesValue(cmd *ucli.Command, tok string) bool {
	name := strings.TrimLeft(tok, "-")
	for _, f := range cmd.Flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		if tv, ok := f.(interface{ TakesValue() bool }); ok {
			return tv.TakesValue()
		}
		return true
	}
	return false
}

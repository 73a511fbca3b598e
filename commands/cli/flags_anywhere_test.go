package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestHoistFlags(t *testing.T) {
	app := newApp(&env{Streams: Streams{Getenv: func(string) string { return "" }}})
	for _, tt := range []struct{ in, want string }{
		// Flags after the argument move in front; values stay with them.
		{"receipts ses_A --since 2 -f", "receipts --since 2 -f ses_A"},
		{"receipts ses_A --since=2", "receipts --since=2 ses_A"},
		// Subcommands are found first.
		{"continuation put ses_A - --state-dir d", "continuation put --state-dir d ses_A -"},
		{"renewal status ses_A --json", "renewal status --json ses_A"},
		// "--" ends the flags: what follows stays where it is.
		{"receipts ses_A -- --json", "receipts ses_A -- --json"},
		{"receipts --latest -- x --json", "receipts --latest -- x --json"},
		// Nothing to move.
		{"receipts --since 2 ses_A", "receipts --since 2 ses_A"},
		{"sessions --all", "sessions --all"},
		// Help after an argument is the command's help.
		{"receipts ses_A --help", "receipts --help"},
		// Unknown flags move too (urfave then names them).
		{"status ses_A --bogus", "status --bogus ses_A"},
		// run and host-hook keep their order.
		{"run sh -c x --tick 0", "run sh -c x --tick 0"},
		{"run --tick 0 -- sh --json", "run --tick 0 -- sh --json"},
		{"host-hook x --adapter claude", "host-hook x --adapter claude"},
		// Unknown commands are left to urfave.
		{"nosuch a --b", "nosuch a --b"},
	} {
		got := hoistFlags(app, append([]string{"lifeloop"}, strings.Fields(tt.in)...))
		if want := append([]string{"lifeloop"}, strings.Fields(tt.want)...); !slices.Equal(got, want) {
			t.Errorf("hoistFlags(%q) = %q, want %q", tt.in, strings.Join(got[1:], " "), tt.want)
		}
	}
}

// The command table names each command as its constructor does, so a
// command line builds the right one alone.
func TestCommandTableNames(t *testing.T) {
	e := &env{Streams: Streams{Getenv: func(string) string { return "" }}}
	for _, c := range commands {
		if got := c.build(e).Name; got != c.name {
			t.Errorf("commands table says %q, its constructor builds %q", c.name, got)
		}
		if app := newApp(e, c.name); len(app.Commands) != 1 || app.Commands[0].Name != c.name {
			t.Errorf("newApp(%q) built %d commands", c.name, len(app.Commands))
		}
	}
	if got := commandNamed([]string{"lifeloop", "run", "--", "true"}); got != "run" {
		t.Errorf(`commandNamed(run -- true) = %q`, got)
	}
	for _, args := range [][]string{{"lifeloop"}, {"lifeloop", "--help"}, {"lifeloop", "help", "run"}, {"lifeloop", "nope"}} {
		if got := commandNamed(args); got != "" {
			t.Errorf("commandNamed(%q) = %q, want the whole tree", args, got)
		}
	}
}

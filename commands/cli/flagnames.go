package cli

import (
	ucli "github.com/urfave/cli/v2"
)

// The CLI library answers Names() with a regular expression per name
// (stripping v1-style "name, alias" spellings lifeloop never uses), and
// asks it of every flag for every flag on each run: before each command
// runs, IsSet walks the command's flags once per flag. For `run` (about
// 30 flags) that was some 900 regexp replacements, 3 % of a whole
// `lifeloop run -- true`. The wrappers below answer Names() from the
// fields; every other method is the wrapped flag's own, so parsing and
// help are unchanged.

type (
	boolFlag        struct{ *ucli.BoolFlag }
	durationFlag    struct{ *ucli.DurationFlag }
	genericFlag     struct{ *ucli.GenericFlag }
	intFlag         struct{ *ucli.IntFlag }
	stringFlag      struct{ *ucli.StringFlag }
	stringSliceFlag struct{ *ucli.StringSliceFlag }
	uint64Flag      struct{ *ucli.Uint64Flag }
)

func (f boolFlag) Names() []string        { return flagNames(f.Name, f.Aliases) }
func (f durationFlag) Names() []string    { return flagNames(f.Name, f.Aliases) }
func (f genericFlag) Names() []string     { return flagNames(f.Name, f.Aliases) }
func (f intFlag) Names() []string         { return flagNames(f.Name, f.Aliases) }
func (f stringFlag) Names() []string      { return flagNames(f.Name, f.Aliases) }
func (f stringSliceFlag) Names() []string { return flagNames(f.Name, f.Aliases) }
func (f uint64Flag) Names() []string      { return flagNames(f.Name, f.Aliases) }

func flagNames(name string, aliases []string) []string {
	return append([]string{name}, aliases...)
}

// withPlainNames wraps the flags of c and of its subcommands.
func withPlainNames(c *ucli.Command) {
	for i, f := range c.Flags {
		c.Flags[i] = plainNames(f)
	}
	for _, sub := range c.Subcommands {
		withPlainNames(sub)
	}
}

// plainNames wraps f when it is one of the flag types lifeloop uses.
func plainNames(f ucli.Flag) ucli.Flag {
	switch f := f.(type) {
	case *ucli.BoolFlag:
		return boolFlag{f}
	case *ucli.DurationFlag:
		return durationFlag{f}
	case *ucli.GenericFlag:
		return genericFlag{f}
	case *ucli.IntFlag:
		return intFlag{f}
	case *ucli.StringFlag:
		return stringFlag{f}
	case *ucli.StringSliceFlag:
		return stringSliceFlag{f}
	case *ucli.Uint64Flag:
		return uint64Flag{f}
	}
	return f
}

// durationOf is the duration flag f wraps, or nil.
func durationOf(f ucli.Flag) *ucli.DurationFlag {
	switch f := f.(type) {
	case durationFlag:
		return f.DurationFlag
	case *ucli.DurationFlag:
		return f
	}
	return nil
}

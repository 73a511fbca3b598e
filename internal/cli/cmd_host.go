package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/hostassets"
)

// hostOptions are the inputs of `lifeloop host apply|inspect|remove`.
type hostOptions struct {
	Adapter string
	Project string
	User    bool
	Command string
	JSON    bool

	Out    io.Writer
	Getenv func(string) string
}

func hostFlags(o *hostOptions, withJSON bool) []ucli.Flag {
	fl := []ucli.Flag{
		&ucli.StringFlag{Name: "adapter", Usage: "adapter `ID` (claude, codex)", Destination: &o.Adapter},
		&ucli.StringFlag{Name: "project", Usage: "project `DIR` whose .claude/settings.json to use (claude; default the current folder)", Destination: &o.Project},
		&ucli.BoolFlag{Name: "user", Usage: "use the user's settings ($CLAUDE_CONFIG_DIR or ~/.claude/settings.json); codex always uses $CODEX_HOME/hooks.json", Destination: &o.User},
		&ucli.StringFlag{Name: "command", Usage: "lifeloop `PROGRAM` the hooks run (default this lifeloop's absolute path)", Destination: &o.Command},
	}
	if withJSON {
		fl = append(fl, &ucli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &o.JSON})
	}
	return fl
}

func hostCommand(e *env) *ucli.Command {
	var o hostOptions
	sub := func(name, usage, desc string, withJSON bool, run func(hostOptions) error) *ucli.Command {
		return &ucli.Command{
			Name: name, Usage: usage, Description: desc, OnUsageError: commandUsageError,
			Flags: hostFlags(&o, withJSON),
			Action: func(c *ucli.Context) error {
				if c.NArg() > 0 {
					return usageErrorf("host %s takes no arguments, got %q", name, c.Args().First())
				}
				o.Out, o.Getenv = e.Out, e.Getenv
				return run(o)
			},
		}
	}
	return &ucli.Command{
		Name:  "host",
		Usage: "install, check or remove lifeloop's native hooks in a harness's settings (native_hook mode)",
		Subcommands: []*ucli.Command{
			sub("apply", "add lifeloop's hooks to the settings file, keeping every entry of yours",
				"Adds one `lifeloop host-hook` command hook per lifecycle hook event to the\n"+
					"adapter's settings file (claude: .claude/settings.json of --project, or the user's\n"+
					"with --user; codex: $CODEX_HOME/hooks.json). Your own entries, keys and their\n"+
					"order are kept; applying twice changes nothing. The previous content is kept as\n"+
					"<file>.lifeloop-backup. Codex runs hooks only when they are trusted.\n\n"+
					"Exit status: 0 done; 1 the file cannot be read, parsed or written; 2 usage.",
				false, hostApplyRun),
			sub("inspect", "report whether lifeloop's hooks are present, missing or drifted",
				"Prints, per hook event, present (the expected command), drifted (a lifeloop hook\n"+
					"with another command, e.g. a moved binary: run `host apply` again) or missing.\n\n"+
					"Exit status: 0 every hook present; 1 any missing or drifted, or the file is\n"+
					"unreadable; 2 usage.",
				true, hostInspectRun),
			sub("remove", "take out exactly the hooks `host apply` added",
				"Removes every lifeloop host-hook entry of the adapter, and the groups and event\n"+
					"lists that leave empty; your own entries stay. After apply then remove, a file\n"+
					"in the usual indented style is byte-for-byte what it was.\n\n"+
					"Exit status: 0 done; 1 the file cannot be read, parsed or written; 2 usage.",
				false, hostRemoveRun),
		},
	}
}

// settingsPath resolves the settings file for o.
func (o hostOptions) settingsPath() (string, error) {
	home := o.Getenv("HOME")
	switch o.Adapter {
	case "":
		return "", usageErrorf("host needs --adapter ID (claude or codex)")
	case hooks.AdapterClaude:
		if o.User && o.Project != "" {
			return "", usageErrorf("give --project DIR or --user, not both")
		}
		if o.User {
			if home == "" && o.Getenv("CLAUDE_CONFIG_DIR") == "" {
				return "", exitf(ExitFailed, "HOME is not set; cannot find the user's Claude settings")
			}
			return hostassets.ClaudeUserSettings(home, o.Getenv("CLAUDE_CONFIG_DIR")), nil
		}
		dir := o.Project
		if dir == "" {
			var err error
			if dir, err = os.Getwd(); err != nil {
				return "", exitf(ExitFailed, "%v", err)
			}
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", exitf(ExitFailed, "%v", err)
		}
		return hostassets.ClaudeProjectSettings(abs), nil
	case hooks.AdapterCodex:
		if o.Project != "" {
			return "", usageErrorf("codex reads hooks from $CODEX_HOME/hooks.json only; drop --project")
		}
		if home == "" && o.Getenv("CODEX_HOME") == "" {
			return "", exitf(ExitFailed, "HOME is not set; cannot find CODEX_HOME")
		}
		return hostassets.CodexHooksFile(home, o.Getenv("CODEX_HOME")), nil
	}
	return "", usageErrorf("adapter %q has no hooks lifeloop can install; known: claude, codex", o.Adapter)
}

// hookCommand is the program the installed hooks run.
func (o hostOptions) hookCommand() ([]string, error) {
	if o.Command != "" {
		abs, err := filepath.Abs(o.Command)
		if err != nil {
			return nil, exitf(ExitFailed, "%v", err)
		}
		return []string{abs}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, exitf(ExitFailed, "cannot find lifeloop's own path (%v); give --command PROGRAM", err)
	}
	return []string{exe}, nil
}

func hostApplyRun(o hostOptions) error {
	path, err := o.settingsPath()
	if err != nil {
		return err
	}
	cmd, err := o.hookCommand()
	if err != nil {
		return err
	}
	res, err := hostassets.Apply(path, o.Adapter, cmd)
	if err != nil {
		return exitf(ExitFailed, "%v", err)
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(o.Out, "%s: lifeloop's %s hooks already present; nothing changed\n", path, o.Adapter)
	case res.Backup != "":
		fmt.Fprintf(o.Out, "%s: added lifeloop's %s hooks (previous content in %s)\n", path, o.Adapter, res.Backup)
	default:
		fmt.Fprintf(o.Out, "%s: created with lifeloop's %s hooks\n", path, o.Adapter)
	}
	for _, n := range hostassets.Notes(o.Adapter) {
		fmt.Fprintf(o.Out, "note: %s\n", n)
	}
	return nil
}

func hostInspectRun(o hostOptions) error {
	path, err := o.settingsPath()
	if err != nil {
		return err
	}
	cmd, err := o.hookCommand()
	if err != nil {
		return err
	}
	rep, err := hostassets.Inspect(path, o.Adapter, cmd)
	if err != nil {
		return exitf(ExitFailed, "%v", err)
	}
	if o.JSON {
		if err := writeIndentedJSON(o.Out, rep); err != nil {
			return exitf(ExitFailed, "%v", err)
		}
	} else {
		fmt.Fprintf(o.Out, "%s (%s)\n", path, map[bool]string{true: "exists", false: "does not exist"}[rep.Exists])
		tw := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HOOK\tSTATE\tCOMMAND")
		for _, h := range rep.Hooks {
			c := h.Command
			if c == "" {
				c = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Hook, h.State, c)
		}
		_ = tw.Flush()
		for _, n := range rep.Notes {
			fmt.Fprintf(o.Out, "note: %s\n", n)
		}
	}
	if !rep.AllPresent {
		return silentExit(ExitFailed)
	}
	return nil
}

func hostRemoveRun(o hostOptions) error {
	path, err := o.settingsPath()
	if err != nil {
		return err
	}
	res, err := hostassets.Remove(path, o.Adapter)
	if err != nil {
		return exitf(ExitFailed, "%v", err)
	}
	if res.Changed {
		fmt.Fprintf(o.Out, "%s: removed lifeloop's %s hooks (previous content in %s)\n", path, o.Adapter, res.Backup)
	} else {
		fmt.Fprintf(o.Out, "%s: no lifeloop %s hooks; nothing changed\n", path, o.Adapter)
	}
	return nil
}

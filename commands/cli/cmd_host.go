package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/hostassets"
)

// hostOptions are the inputs of `lifeloop host apply|inspect|remove`.
type hostOptions struct {
	Registry *adapters.Registry
	Adapter  string
	Project  string
	User     bool
	Command  string
	JSON     bool
	// ProcessWrapper: apply or remove lifeloop as the harness's process
	// wrapper instead of its hooks (cmd_host_procwrap.go).
	ProcessWrapper bool

	Out     io.Writer
	Getenv  func(string) string
	Environ []string
	// Cwd is the working directory ("" when unknown).
	Cwd string
}

func hostFlags(o *hostOptions, reg *adapters.Registry, withJSON bool) []ucli.Flag {
	fl := []ucli.Flag{
		&ucli.StringFlag{Name: "adapter", Usage: "adapter `ID` (" + strings.Join(installable(reg), ", ") + ")", Destination: &o.Adapter},
		&ucli.StringFlag{Name: "project", Usage: "project `DIR` whose settings to use, for harnesses with project settings (default the current folder)", Destination: &o.Project},
		&ucli.BoolFlag{Name: "user", Usage: "use the user's settings instead of the project's (harnesses with one settings file always use it)", Destination: &o.User},
		&ucli.StringFlag{Name: "command", Usage: "lifeloop `PROGRAM` the hooks run (default this lifeloop's absolute path)", Destination: &o.Command},
	}
	if withJSON {
		fl = append(fl, &ucli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &o.JSON})
	} else {
		fl = append(fl, &ucli.BoolFlag{Name: "process-wrapper", Usage: "set (or remove) lifeloop as the harness's process wrapper in the user's settings instead of its hooks, chaining the wrapper set there: background sessions the harness starts become lifeloop sessions (" + strings.Join(reg.IDsWith(func(a *adapters.Adapter) bool { return a.ProcessWrapperInstaller() != nil }), ", ") + ")", Destination: &o.ProcessWrapper})
	}
	return fl
}

func hostCommand(e *env) *ucli.Command {
	var o hostOptions
	sub := func(name, usage, desc string, withJSON bool, run func(hostOptions) error) *ucli.Command {
		return &ucli.Command{
			Name: name, Usage: usage, Description: desc, OnUsageError: commandUsageError,
			Flags: hostFlags(&o, e.Registry(), withJSON),
			Action: func(c *ucli.Context) error {
				if c.NArg() > 0 {
					return usageErrorf("host %s takes no arguments, got %q", name, c.Args().First())
				}
				o.Out, o.Getenv, o.Environ, o.Cwd, o.Registry = e.Out, e.Getenv, e.Environ, e.Dir, e.Registry()
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
					"adapter's settings file (`host inspect` names it: the project's settings of\n"+
					"--project, or the user's with --user, where the harness has both). Your own\n"+
					"entries, keys and their order are kept; applying twice changes nothing. The\n"+
					"previous content is kept as <file>.lifeloop-backup. What the harness itself\n"+
					"needs before it runs them (trust, say) is printed as a note.\n\n"+
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
					"in the usual indented style is byte-for-byte what it was. A hooks file that is\n"+
					"lifeloop's own (a harness that runs every file of its hooks folder) is deleted.\n\n"+
					"Exit status: 0 done; 1 the file cannot be read, parsed or written; 2 usage.",
				false, hostRemoveRun),
		},
	}
}

// installable lists the adapters whose hooks host apply can install.
func installable(reg *adapters.Registry) []string {
	return reg.IDsWith(func(a *adapters.Adapter) bool { return a.HostInstaller() != nil })
}

// installer returns the adapter's host installer and settings file for o.
func (o hostOptions) installer() (adapters.HostInstaller, string, error) {
	known := strings.Join(installable(o.Registry), ", ")
	if o.Adapter == "" {
		return nil, "", usageErrorf("host needs --adapter ID (%s)", strings.Join(installable(o.Registry), " or "))
	}
	a, err := o.Registry.Lookup(o.Adapter)
	if err != nil || a.HostInstaller() == nil {
		return nil, "", usageErrorf("adapter %q has no hooks lifeloop can install; known: %s", o.Adapter, known)
	}
	hi := a.HostInstaller()
	if o.Cwd == "" && o.Project == "" {
		return nil, "", exitf(exitcode.Failed, "cannot read the working directory; give --project DIR")
	}
	project := o.Project
	if project != "" && !filepath.IsAbs(project) && o.Cwd != "" {
		project = filepath.Join(o.Cwd, project)
	}
	path, err := hi.HostSettingsPath(adapters.HostTarget{Getenv: o.Getenv, Project: project, Cwd: o.Cwd, User: o.User})
	var usage *adapters.HostTargetError
	switch {
	case errors.As(err, &usage):
		return nil, "", usageErrorf("%s", usage.Msg)
	case err != nil:
		return nil, "", exitf(exitcode.Failed, "%v", err)
	}
	return hi, path, nil
}

// hookCommand is the program the installed hooks run.
func (o hostOptions) hookCommand() ([]string, error) {
	if o.Command != "" {
		if filepath.IsAbs(o.Command) {
			return []string{filepath.Clean(o.Command)}, nil
		}
		if o.Cwd == "" {
			return nil, exitf(exitcode.Failed, "cannot read the working directory; give --command as an absolute path")
		}
		return []string{filepath.Join(o.Cwd, o.Command)}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, exitf(exitcode.Failed, "cannot find lifeloop's own path (%v); give --command PROGRAM", err)
	}
	return []string{exe}, nil
}

func hostApplyRun(o hostOptions) error {
	if o.ProcessWrapper {
		return hostWrapperRun(o, false)
	}
	hi, path, err := o.installer()
	if err != nil {
		return err
	}
	cmd, err := o.hookCommand()
	if err != nil {
		return err
	}
	res, err := hostassets.Apply(path, hi.Hooks(), cmd)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(o.Out, "%s: lifeloop's %s hooks already present; nothing changed\n", path, o.Adapter)
	case res.Backup != "":
		fmt.Fprintf(o.Out, "%s: added lifeloop's %s hooks (previous content in %s)\n", path, o.Adapter, res.Backup)
	default:
		fmt.Fprintf(o.Out, "%s: created with lifeloop's %s hooks\n", path, o.Adapter)
	}
	for _, n := range hi.HostNotes() {
		fmt.Fprintf(o.Out, "note: %s\n", n)
	}
	return nil
}

func hostInspectRun(o hostOptions) error {
	hi, path, err := o.installer()
	if err != nil {
		return err
	}
	cmd, err := o.hookCommand()
	if err != nil {
		return err
	}
	rep, err := hostassets.Inspect(path, hi.Hooks(), cmd, hi.HostNotes())
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	if o.JSON {
		if err := writeIndentedJSON(o.Out, rep); err != nil {
			return exitf(exitcode.Failed, "%v", err)
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
		return silentExit(exitcode.Failed)
	}
	return nil
}

func hostRemoveRun(o hostOptions) error {
	if o.ProcessWrapper {
		return hostWrapperRun(o, true)
	}
	hi, path, err := o.installer()
	if err != nil {
		return err
	}
	remove := hostassets.Remove
	if own, ok := hi.(adapters.HostOwnFile); ok && own.HostOwnsFile() {
		remove = hostassets.RemoveOwn
	}
	res, err := remove(path, hi.Hooks())
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	switch {
	case res.Deleted:
		fmt.Fprintf(o.Out, "%s: deleted (it held only lifeloop's %s hooks)\n", path, o.Adapter)
	case res.Changed:
		fmt.Fprintf(o.Out, "%s: removed lifeloop's %s hooks (previous content in %s)\n", path, o.Adapter, res.Backup)
	default:
		fmt.Fprintf(o.Out, "%s: no lifeloop %s hooks; nothing changed\n", path, o.Adapter)
	}
	return nil
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/launcher"
)

// controlOptions are the flags of status, abort, pause and resume.
type controlOptions struct {
	StateDir string
	Session  string
	Latest   bool
	JSON     bool
}

func controlFlags(o *controlOptions, withJSON bool) []ucli.Flag {
	fl := []ucli.Flag{
		stateDirFlag(&o.StateDir),
		&ucli.BoolFlag{Name: "latest", Usage: "use the most recent session", Destination: &o.Latest},
	}
	if withJSON {
		fl = append(fl, &ucli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &o.JSON})
	}
	return fl
}

// resolveSession finds the session named by o (an id or --latest).
func resolveSession(e *env, o controlOptions) (root string, rec statedir.SessionRecord, err error) {
	root, err = statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return "", rec, exitf(exitcode.Failed, "%v", err)
	}
	switch {
	case o.Latest && o.Session != "":
		return "", rec, usageErrorf("give a SESSION or --latest, not both")
	case o.Latest:
		rec, err = statedir.Latest(root)
		if err != nil {
			return "", rec, exitf(exitcode.Failed, "no session found in %s; start one with `lifeloop run -- CMD`", root)
		}
	case o.Session == "":
		return "", rec, usageErrorf("which session? give its id (see `lifeloop sessions`) or --latest")
	default:
		rec, err = statedir.ReadSession(root, o.Session)
		if err != nil {
			return "", rec, exitf(exitcode.Failed, "unknown session %q in %s; see `lifeloop sessions`", o.Session, root)
		}
	}
	return root, rec, nil
}

func statusCommand(e *env) *ucli.Command {
	var o controlOptions
	return &ucli.Command{
		Name:      "status",
		Usage:     "show a session's state (live numbers when its wrapper runs)",
		ArgsUsage: "SESSION|--latest",
		Flags:     controlFlags(&o, true),
		Action: func(c *ucli.Context) error {
			o.Session = c.Args().First()
			return statusRun(c.Context, e, o)
		},
	}
}

func statusRun(ctx context.Context, e *env, o controlOptions) error {
	root, rec, err := resolveSession(e, o)
	if err != nil {
		return err
	}
	st := launcher.Status{Session: rec}
	live := false
	if !rec.State.IsTerminal() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := launcher.Call(cctx, launcher.ControlSocketFor(root, rec.ID), launcher.OpStatus, nil, &st)
		switch {
		case err == nil:
			live = true
		case errors.Is(err, launcher.ErrNotLive):
			// The wrapper is gone without recording an end (killed).
		default:
			return exitf(exitcode.Failed, "%v", err)
		}
	}
	if o.JSON {
		var out any = struct {
			Live    bool                   `json:"live"`
			Session statedir.SessionRecord `json:"session"`
		}{false, st.Session}
		if live {
			out = struct {
				launcher.Status
				Live bool `json:"live"`
			}{st, true}
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.Out, string(b))
		return nil
	}
	s := st.Session
	fmt.Fprintf(e.Out, "session   %s\nstate     %s\nadapter   %s\npid       %d\ncommand   %v\ncwd       %s\n", s.ID, s.State, s.AdapterID, s.Pid, s.Argv, s.Cwd)
	if live {
		fmt.Fprintf(e.Out, "live      yes (%d processes, %d MiB, %.1fs CPU, %s, idle %.0fs)\n", st.Processes, st.RSSBytes>>20, st.CPUSeconds, st.Activity, st.IdleSeconds)
	} else if !s.State.IsTerminal() {
		fmt.Fprintln(e.Out, "live      no (the wrapper is gone without recording an end)")
	}
	if s.Exit != nil {
		fmt.Fprintf(e.Out, "exit      %d (%s, %s)\n", s.Exit.Code, s.Exit.Outcome, s.Exit.Reason)
	}
	printHarness(e.Out, root, s.ID)
	return nil
}

// simpleControlCommand builds abort, pause and resume: one operation on
// the live wrapper.
func simpleControlCommand(e *env, name, op, usage string) *ucli.Command {
	var o controlOptions
	return &ucli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "SESSION|--latest",
		Flags:     controlFlags(&o, false),
		Action: func(c *ucli.Context) error {
			o.Session = c.Args().First()
			root, rec, err := resolveSession(e, o)
			if err != nil {
				return err
			}
			if rec.State.IsTerminal() {
				return exitf(exitcode.Failed, "session %s already ended (%s); nothing to %s", rec.ID, rec.State, name)
			}
			cctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
			defer cancel()
			var res map[string]any
			if err := launcher.Call(cctx, launcher.ControlSocketFor(root, rec.ID), op, nil, &res); err != nil {
				if errors.Is(err, launcher.ErrNotLive) {
					return exitf(exitcode.Failed, "session %s has no live wrapper (its lifeloop run is gone)", rec.ID)
				}
				return exitf(exitcode.Failed, "%s %s: %v", name, rec.ID, err)
			}
			fmt.Fprintf(e.Out, "%s: %v\n", rec.ID, res["state"])
			return nil
		},
	}
}

func abortCommand(e *env) *ucli.Command {
	return simpleControlCommand(e, "abort", launcher.OpAbort, "stop a running session: SIGTERM, grace, then SIGKILL (state aborted)")
}

func pauseCommand(e *env) *ucli.Command {
	return simpleControlCommand(e, "pause", launcher.OpPause, "suspend a running harness (SIGSTOP to its process group)")
}

func resumeCommand(e *env) *ucli.Command {
	return simpleControlCommand(e, "resume", launcher.OpResume, "continue a paused harness (SIGCONT to its process group)")
}

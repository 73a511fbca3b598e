package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/seal"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/launcher"
)

// controlOptions are the flags of status, abort, pause and resume.
type controlOptions struct {
	StateDir string
	Session  string
	Latest   bool
	JSON     bool
	// ReadOnly leaves a session whose wrapper is gone unsealed (ledger
	// verify never writes).
	ReadOnly bool
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
			var ok bool
			if rec, ok = sessionByShortID(root, o.Session); !ok {
				return "", rec, exitf(exitcode.Failed, "unknown session %q in %s; see `lifeloop sessions`", o.Session, root)
			}
		}
	}
	if !o.ReadOnly {
		rec = e.sealIfLost(root, rec)
	}
	return root, rec, nil
}

// sealIfLost seals rec when its wrapper died without recording its end
// (package seal); a session that cannot be sealed yet is reported on
// stderr and returned as it was.
func (e *env) sealIfLost(root string, rec statedir.SessionRecord) statedir.SessionRecord {
	out, err := seal.Check(root, rec, e.sealOptions())
	if err != nil {
		fmt.Fprintf(e.Err, "lifeloop: warning: %v\n", err)
	}
	return out
}

// sweepDelay is how long `run` waits before sealing other sessions whose
// wrapper died: past its harness's start.
const sweepDelay = 2 * time.Second

// sweepEvery is how often, at most, the runs of one state folder sweep it
// (statedir.SweepDue); the commands that list or show sessions seal what
// they find whenever they run.
const sweepEvery = time.Minute

// sweepLostLater seals, after delay and on a goroutine of its own, every
// session under root whose wrapper died (seal.Unlisted and seal.CheckAll),
// unless a run swept root less than sweepEvery ago, saying nothing: `run`
// must not write while its harness owns the terminal. The returned
// function cancels a sweep not yet started; a sweep under way is
// abandoned at exit (sealing is idempotent and safe to cut short).
func (e *env) sweepLostLater(root string, delay time.Duration) (stop func()) {
	opts := e.sealOptions()
	t := time.AfterFunc(delay, func() {
		if !statedir.SweepDue(root, sweepEvery, e.Now()) {
			return
		}
		_, _ = seal.Unlisted(root, opts)
		recs, _ := statedir.ListSessions(root)
		_, _ = seal.CheckAll(root, recs, opts)
	})
	return func() { t.Stop() }
}

// sealOptions are how this lifeloop seals a session whose wrapper died.
func (e *env) sealOptions() seal.Options {
	return seal.Options{Registry: e.Registry(), Now: e.Now, Cleanup: launcher.RemoveLeftovers}
}

// sessionByShortID finds the one session whose short id (the form the
// terminal tables show) is short.
func sessionByShortID(root, short string) (statedir.SessionRecord, bool) {
	recs, _ := statedir.ListSessions(root)
	var found []statedir.SessionRecord
	for _, r := range recs {
		if sessionview.Short(r.ID) == short && r.ID != short {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		return statedir.SessionRecord{}, false
	}
	return found[0], true
}

func statusCommand(e *env) *ucli.Command {
	var o controlOptions
	return &ucli.Command{
		Name:      "status",
		Usage:     "show a session's state (live numbers when its wrapper runs)",
		ArgsUsage: "SESSION|--latest",
		Description: "On a terminal: a short block for a person (state, harness, pid, uptime, idle or\n" +
			"active, last frame, context pressure, usage and cost, pending renewal, last event), colour\n" +
			"unless NO_COLOR is set. Otherwise the plain key/value lines; --json prints the session\n" +
			"record and, while its wrapper runs, its live numbers; \"usage\" is the tokens and cost of\n" +
			"its model calls so far (or at its end), as session.ended carries them.",
		Flags: controlFlags(&o, true),
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
	st := control.Status{Session: rec}
	live := false
	if !rec.State.IsTerminal() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := control.Call(cctx, control.SocketFor(root, rec.ID), control.OpStatus, nil, &st)
		switch {
		case err == nil:
			live = true
		case errors.Is(err, control.ErrNotLive):
			// The wrapper is gone without recording an end (killed).
		default:
			return exitf(exitcode.Failed, "%v", err)
		}
	}
	// One read of the ledger serves every form of the answer.
	sum, sumErr := sessionview.Load(root, rec)
	if sumErr != nil {
		fmt.Fprintf(e.Err, "lifeloop: warning: %v\n", sumErr)
	}
	harness := factsOf(sum)
	// The policy client's state file (autorenew.json), as the summary
	// read it.
	var policy *autorenew.State
	if sum.Policy != nil {
		policy = sum.Policy.Client
	}
	var orphans []int
	if !live {
		orphans = seal.Orphans(rec)
	}
	if o.JSON {
		var out any = struct {
			Live       bool                   `json:"live"`
			Session    statedir.SessionRecord `json:"session"`
			OrphanPids []int                  `json:"orphan_pids,omitempty"`
			Autorenew  *autorenew.State       `json:"autorenew,omitempty"`
			Usage      map[string]any         `json:"usage,omitempty"`
			harnessFacts
		}{false, st.Session, orphans, policy, sessionview.SessionUsageBlock(root, rec.ID), harness}
		if live {
			out = struct {
				control.Status
				Live      bool             `json:"live"`
				Autorenew *autorenew.State `json:"autorenew,omitempty"`
				harnessFacts
			}{st, true, policy, harness}
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.Out, string(b))
		return nil
	}
	if e.human() {
		if live {
			sum.SetLive(st)
		}
		return writeStatusBlock(e.Out, sum, st.Attention, orphans, policy, e.Now(), e.Getenv("HOME"), e.painter())
	}
	s := st.Session
	fmt.Fprintf(e.Out, "session   %s\nstate     %s\nadapter   %s\npid       %d\ncommand   %v\ncwd       %s\n", s.ID, s.State, s.AdapterID, s.Pid, s.Argv, s.Cwd)
	if live {
		usage := ""
		if st.RSSBytes != nil && st.CPUSeconds != nil {
			usage = fmt.Sprintf(", %d MiB, %.1fs CPU", *st.RSSBytes>>20, *st.CPUSeconds)
		}
		fmt.Fprintf(e.Out, "live      yes (%d processes%s, %s, idle %.0fs)\n", st.Processes, usage, st.Activity, st.IdleSeconds)
		for _, h := range st.Holding {
			fmt.Fprintf(e.Out, "holding   %s\n", h)
		}
		if a := st.Attention; a != nil {
			fmt.Fprintf(e.Out, "attention %s\n", a.String(e.Now()))
		}
	} else if !s.State.IsTerminal() {
		fmt.Fprintln(e.Out, "live      no (the wrapper is gone without recording an end)")
	}
	if s.Exit != nil {
		fmt.Fprintf(e.Out, "exit      %d (%s, %s)\n", s.Exit.Code, s.Exit.Outcome, s.Exit.Reason)
	}
	if policy != nil {
		fmt.Fprintf(e.Out, "autorenew %s\n", autorenewText(*policy, e.Now(), painter{}))
	}
	harness.print(e.Out)
	printOrphans(e.Out, s.ID, orphans)
	return nil
}

// printOrphans names what is left of a harness that outlived its wrapper.
func printOrphans(w io.Writer, id string, pids []int) {
	if len(pids) > 0 {
		fmt.Fprintf(w, "orphan    %s\n", orphansText(id, pids))
	}
}

// orphansText says what is left of the harness of session id that outlived
// its wrapper, and how to stop it.
func orphansText(id string, pids []int) string {
	return fmt.Sprintf("the harness still runs without its wrapper: pids %v; stop it with `lifeloop abort %s`", pids, id)
}

// simpleControlCommand builds abort, pause and resume: one operation on
// the live wrapper.
func simpleControlCommand(e *env, name, op, usage string) *ucli.Command {
	var o controlOptions
	var r remoteOptions
	return &ucli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "SESSION|--latest",
		Description: "With --fleet URL --machine M, the session runs on machine M: the command goes to that\n" +
			"machine's `lifeloop serve` over RabbitMQ, signed with the fleet secret, and its answer is\n" +
			"printed (docs/fleet.md).",
		Flags: append(controlFlags(&o, false), r.flags()...),
		Action: func(c *ucli.Context) error {
			o.Session = c.Args().First()
			if r.URL != "" || r.Machine != "" {
				return remoteControl(c.Context, e, r, name, o)
			}
			root, rec, err := resolveSession(e, o)
			if err != nil {
				return err
			}
			if op == control.OpAbort && (rec.State.IsTerminal() || statedir.WrapperGone(root, rec.ID)) {
				if pids := seal.Orphans(rec); len(pids) > 0 {
					return abortOrphan(c.Context, e, rec, pids)
				}
			}
			res, err := controlSession(c.Context, root, rec, name, op)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.Out, "%s: %v\n", rec.ID, res["state"])
			return nil
		},
	}
}

// abortOrphan stops what is left of a harness whose wrapper is gone: its
// process group gets SIGTERM, then SIGKILL after launcher.DefaultGrace.
func abortOrphan(ctx context.Context, e *env, rec statedir.SessionRecord, pids []int) error {
	_ = syscall.Kill(-rec.Pid, syscall.SIGTERM)
	deadline := time.Now().Add(launcher.DefaultGrace)
	for len(seal.Orphans(rec)) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	if len(seal.Orphans(rec)) > 0 {
		_ = syscall.Kill(-rec.Pid, syscall.SIGKILL)
		for i := 0; i < 40 && len(seal.Orphans(rec)) > 0; i++ {
			time.Sleep(25 * time.Millisecond)
		}
	}
	if left := seal.Orphans(rec); len(left) > 0 {
		return exitf(exitcode.Failed, "session %s: the orphaned harness (pids %v) survived SIGKILL", rec.ID, left)
	}
	fmt.Fprintf(e.Out, "%s: stopped the orphaned harness (pids %v); the session is %s\n", rec.ID, pids, rec.State)
	return nil
}

// controlSession sends op (abort, pause, resume) to the live wrapper of
// rec and returns its answer. The commands and `lifeloop top` both use it.
func controlSession(ctx context.Context, root string, rec statedir.SessionRecord, name, op string) (map[string]any, error) {
	if rec.State.IsTerminal() {
		return nil, exitf(exitcode.Failed, "session %s already ended (%s); nothing to %s", rec.ID, rec.State, name)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var res map[string]any
	if err := control.Call(cctx, control.SocketFor(root, rec.ID), op, nil, &res); err != nil {
		if errors.Is(err, control.ErrNotLive) {
			return nil, exitf(exitcode.Failed, "session %s has no live wrapper (its lifeloop run is gone)", rec.ID)
		}
		return nil, exitf(exitcode.Failed, "%s %s: %v", name, rec.ID, err)
	}
	return res, nil
}

func abortCommand(e *env) *ucli.Command {
	return simpleControlCommand(e, "abort", control.OpAbort, "stop a running session: SIGTERM, grace, then SIGKILL (state aborted)")
}

func pauseCommand(e *env) *ucli.Command {
	return simpleControlCommand(e, "pause", control.OpPause, "suspend a running harness (SIGSTOP to its process group)")
}

func resumeCommand(e *env) *ucli.Command {
	return simpleControlCommand(e, "resume", control.OpResume, "continue a paused harness (SIGCONT to its process group)")
}

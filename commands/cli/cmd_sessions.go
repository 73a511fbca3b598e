package cli

import (
	"context"
	"fmt"
	"github.com/lifeloop/lifeloop/autorenew"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/seal"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// sessionsOptions are the inputs of `lifeloop sessions`.
type sessionsOptions struct {
	StateDir string
	JSON     bool
	All      bool
}

// sessionsShown is how many sessions the terminal table shows without
// --all.
const sessionsShown = 20

func sessionsCommand(e *env) *ucli.Command {
	var o sessionsOptions
	return &ucli.Command{
		Name:  "sessions",
		Usage: "list lifeloop sessions, newest first",
		Description: "Lists the sessions recorded in the state directory, newest first.\n\n" +
			"On a terminal: a table of the sessions that have not ended or lost their wrapper\n" +
			"(the newest 20; --all lists every session, ended ones included): short id, harness, state, what it\n" +
			"waits for (a permission, a question, an error, input) and for how long, start (local\n" +
			"time), duration, frames, last context pressure and working folder. Colour unless\n" +
			"NO_COLOR is set.\n\n" +
			"Otherwise (a pipe, a file): every session as id, state, adapter, start time (UTC),\n" +
			"wrapper pid and the wrapped command. --json prints the session records\n" +
			"(session.json) as one JSON array, each with \"autorenew\", the state of the renewal policy\n" +
			"client that follows it (autorenew.json), when one does, and \"attention\", whether a session not\n" +
			"ended waits for a person (its ledger's latest attention block), and \"usage\", the tokens and cost\n" +
			"of its model calls (cost_usd null when unknown, with cost_provenance). Sessions whose session.json cannot be read are\n" +
			"reported on stderr and left out.",
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "json", Usage: "print a JSON array of session records", Destination: &o.JSON},
			&ucli.BoolFlag{Name: "all", Usage: "on a terminal, list every session (ended ones too), not the newest 20 still running", Destination: &o.All},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("sessions takes no arguments (got %q)", c.Args().First())
			}
			return sessionsRun(c.Context, e, o)
		},
	}
}

func sessionsRun(_ context.Context, e *env, o sessionsOptions) error {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	// A wrapper that died before it first wrote session.json left a
	// session no list shows; it is sealed (and so listed) first.
	if _, err := seal.Unlisted(root, e.sealOptions()); err != nil {
		fmt.Fprintf(e.Err, "lifeloop: warning: %v\n", err)
	}
	recs, problems := statedir.ListSessions(root)
	if problems != nil {
		for _, line := range strings.Split(problems.Error(), "\n") {
			fmt.Fprintf(e.Err, "lifeloop: warning: skipped a session: %s\n", line)
		}
	}
	// Sessions whose wrapper died are sealed before they are shown.
	recs, problems = seal.CheckAll(root, recs, e.sealOptions())
	if problems != nil {
		for _, line := range strings.Split(problems.Error(), "\n") {
			fmt.Fprintf(e.Err, "lifeloop: warning: %s\n", line)
		}
	}
	if o.JSON {
		return writeIndentedJSON(e.Out, sessionsJSON(root, recs, e.Now()))
	}
	if len(recs) == 0 {
		_, err := fmt.Fprintf(e.Out, "no sessions in %s\n", root)
		return err
	}
	if e.human() {
		return sessionsHuman(e, root, recs, o.All)
	}
	return writeSessionTable(e.Out, recs)
}

func writeSessionTable(w io.Writer, recs []statedir.SessionRecord) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tADAPTER\tSTARTED\tPID\tCOMMAND")
	for _, r := range recs {
		started := "-"
		if r.StartedAt != nil {
			started = r.StartedAt.UTC().Format(time.DateTime)
		}
		pid := "-"
		if r.Pid > 0 {
			pid = strconv.Itoa(r.Pid)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n",
			r.ID, r.State, orDash(r.AdapterID), started, pid, commandLine(r.Argv, 60))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// commandLine renders argv on one line, quoting words with spaces or
// control characters, cut to at most max runes.
func commandLine(argv []string, max int) string {
	if len(argv) == 0 {
		return "-"
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\r\"'\\") || strings.ContainsFunc(a, func(r rune) bool { return r < 0x20 }) {
			a = strconv.Quote(a)
		}
		words[i] = a
	}
	s := strings.Join(words, " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// sessionsHuman prints the terminal table: without all, the newest
// sessionsShown sessions that have not ended or lost their wrapper.
func sessionsHuman(e *env, root string, recs []statedir.SessionRecord, all bool) error {
	var sums []sessionview.Summary
	for _, rec := range recs {
		if !all && ((rec.State.IsTerminal() && rec.State != statedir.StateLost) || len(sums) == sessionsShown) {
			continue
		}
		s, err := sessionview.Load(root, rec)
		if err != nil {
			fmt.Fprintf(e.Err, "lifeloop: warning: session %s: %v\n", rec.ID, err)
		}
		sums = append(sums, s)
	}
	return writeSessionsHuman(e.Out, sums, len(recs)-len(sums), e.Now(), e.Getenv("HOME"), e.painter())
}

// sessionJSON is one session as `sessions --json` prints it: its record,
// the state of the renewal policy client that follows it
// (autorenew.json) when one does or did, and, while it has not ended,
// whether it waits for a person (the attention block of its ledger's
// latest tick, with for_seconds counted at now), and the tokens and cost
// of its model calls (its ledger's usage blocks).
type sessionJSON struct {
	statedir.SessionRecord
	Autorenew *autorenew.State       `json:"autorenew,omitempty"`
	Attention *sessionview.Attention `json:"attention,omitempty"`
	Usage     *sessionview.Usage     `json:"usage,omitempty"`
}

// sessionsJSON is the array `sessions --json` prints (never null).
func sessionsJSON(root string, recs []statedir.SessionRecord, now time.Time) []sessionJSON {
	out := make([]sessionJSON, 0, len(recs))
	for _, rec := range recs {
		s := sessionJSON{SessionRecord: rec}
		if st, err := autorenew.ReadState(autorenew.StatePath(statedir.SessionDir(root, rec.ID))); err == nil {
			s.Autorenew = &st
		}
		if !rec.State.IsTerminal() {
			s.Attention = sessionview.LatestAttention(root, rec.ID).Stamp(now)
		}
		s.Usage = sessionview.LatestUsage(root, rec.ID)
		out = append(out, s)
	}
	return out
}

package kit

import (
	"slices"

	"github.com/lifeloop/lifeloop/adapters"
)

// SessionOptions is how a harness's command line chooses its session,
// for a harness that takes a new session's id as an option and resumes
// one by id: with it, Pin and Relaunch implement adapters.SessionPinner
// and adapters.Relauncher's RelaunchArgv.
type SessionOptions struct {
	// Args parses the harness's own arguments (past the program).
	Args func(args []string) []adapters.Arg
	// Starts reports whether the harness's own arguments start (or
	// resume) a session: no subcommand, no --help or --version.
	Starts func(args []string) bool
	// Picks reports whether an option chooses the session (resume one,
	// the latest, fork, or name a new one's id). Such options are
	// one-shot: Pin leaves a launch that has one as it is, and Relaunch
	// removes them.
	Picks func(option string) bool
	// PinFlag names a new session's id: `PinFlag UUID`.
	PinFlag string
	// Resume returns the words that resume the session id.
	Resume func(id string) []string
	// Sent reports an argument a resumed session has already had (the
	// TUI's first prompt): Relaunch drops it to resume. Nil drops none.
	Sent func(adapters.Arg) bool
}

// Pin inserts `PinFlag UUID` at start (the harness's first own argument)
// of a command line that starts a session and chooses none, so telemetry
// follows exactly this launch's session, and returns the new argv and
// the id. Any other command line comes back as it is, with "".
func (o SessionOptions) Pin(argv []string, start int) ([]string, string) {
	if start <= 0 || start > len(argv) || !o.Starts(argv[start:]) {
		return argv, ""
	}
	for _, ca := range o.Args(argv[start:]) {
		if o.Picks(ca.Option) {
			return argv, ""
		}
	}
	id := NewUUID()
	return slices.Insert(slices.Clone(argv), start, o.PinFlag, id), id
}

// Relaunch returns the command line that starts the session again:
// without the options that chose the session, and to resume (id not
// "") Resume(id) at start and without the arguments already Sent. A
// fresh start keeps every prompt. argv is never modified; false (and a
// copy of argv) when start is out of range, resume has no id, or the
// command line starts no session.
func (o SessionOptions) Relaunch(argv []string, start int, id string, resume bool) ([]string, bool) {
	if start <= 0 || start > len(argv) || (resume && id == "") || !o.Starts(argv[start:]) {
		return slices.Clone(argv), false
	}
	out := slices.Clone(argv[:start])
	if resume {
		out = append(out, o.Resume(id)...)
	}
	for _, ca := range o.Args(argv[start:]) {
		switch {
		case o.Picks(ca.Option):
		case resume && o.Sent != nil && o.Sent(ca):
		default:
			out = append(out, ca.Words...)
		}
	}
	return out, true
}

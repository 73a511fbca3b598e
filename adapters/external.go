package adapters

import (
	"context"
	"time"
)

// ExternalLister is a harness that runs sessions of its own accord (a
// service that hosts background sessions) and can say, read-only, which
// run now: sessions lifeloop did not start and does not supervise, which
// `lifeloop top` lists beside its own.
type ExternalLister interface {
	// ListExternal returns the harness's sessions running now for a person
	// whose environment is env, as the harness itself reports them. It
	// returns nil and no error, running nothing, when that person has no
	// session of the harness or the harness is not installed. It ends
	// when ctx ends (the caller bounds it).
	ListExternal(ctx context.Context, env []string) ([]ExternalSession, error)
	// ExternalStamp is a cheap summary (names, sizes, modification
	// times) of the harness's files its listing depends on for env: a
	// listing asked again under the same stamp would say the same, but
	// for what the files do not record (a process that died without a
	// word), so a caller asks again when the stamp changes and, rarely,
	// when it does not. It runs nothing.
	ExternalStamp(env []string) string
}

// ExternalSession is one session a harness runs that lifeloop did not
// start, in the harness's own words.
type ExternalSession struct {
	// ID is the harness's own short name of the session (what its
	// commands take), or SessionID when it has none.
	ID string
	// SessionID is the harness session; Pid its process (0: not known).
	SessionID string
	Pid       int
	Cwd       string
	// Name is the session's title, when the harness gave it one.
	Name string
	// State is the harness's state of the session (e.g. working,
	// blocked); Status its activity (e.g. busy, idle, waiting) and
	// WaitingFor what it waits for, when it says.
	State, Status, WaitingFor string
	StartedAt                 time.Time
	// Source says where the session was read from (the command run).
	Source string
	// Attach is the command that opens the session in a terminal, or "".
	Attach string
}

// ExternalLister returns the harness's lister of the sessions it runs of
// its own accord, or nil.
func (a *Adapter) ExternalLister() ExternalLister {
	l, _ := a.h.(ExternalLister)
	return l
}

// LookPath finds prog on path (a PATH value: the environment's whose
// harness is asked, not necessarily lifeloop's own) as a launch would,
// skipping empty and relative entries; "" when it is not there.
func LookPath(prog, path string) string { return resolveProgram(prog, path) }

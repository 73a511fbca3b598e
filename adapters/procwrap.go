package adapters

import "time"

// ProcessWrapped is a harness that starts processes of its own in the
// background (a service, the sessions it hosts) through a process wrapper
// a person may name: a command prefix the harness puts before each such
// command line, which must exec the rest. lifeloop offers itself as that
// wrapper (`lifeloop procwrap`) to record each background session as a
// lifeloop session of its own.
type ProcessWrapped interface {
	// WrappedStart says what one command line the harness started
	// through the wrapper is: argv is that command line (the harness's
	// program first), env its environment.
	WrappedStart(argv, env []string) WrappedStart
	// WrappedSession reads, from the harness's own records, the session
	// process pid serves; ok is false while the process serves none yet
	// (a pre-started process waits to be handed one).
	WrappedSession(env []string, pid int) (s WrappedClaim, ok bool)
	// WrapperEnv returns the variables (NAME=VALUE) that make the harness
	// started with env run its background processes through lifeloop:
	// wrapper(chain) is lifeloop's command prefix, chain the wrapper the
	// person had set (nil for none), which lifeloop's execs in turn.
	WrapperEnv(wrapper func(chain []string) []string, env []string) ([]string, error)
}

// WrappedStart is one command line a harness started through its process
// wrapper.
type WrappedStart struct {
	// Session says it runs a session worth recording; false: a service
	// or helper process, passed through unrecorded.
	Session bool
	// SessionID is the harness session it runs; "" when it learns it
	// later (WrappedSession).
	SessionID string
	// LaunchedBy are the harness sessions that started it, when the
	// harness says.
	LaunchedBy []string
}

// WrappedClaim is the session a wrapped process serves, as the harness
// records it once the process has one.
type WrappedClaim struct {
	// ID is the harness session; Cwd its working folder.
	ID, Cwd string
	// LaunchedBy are the harness sessions that started it, when the
	// harness records them (nil: none, or not recorded yet).
	LaunchedBy []string
	// Since is when the session was asked of the harness (zero: not
	// known): a session that continues an earlier conversation writes on
	// to its records, and what they hold from before Since is history,
	// not this process's turns.
	Since time.Time
}

// ProcessWrapped returns the harness's process-wrapper support, or nil.
func (a *Adapter) ProcessWrapped() ProcessWrapped {
	p, _ := a.h.(ProcessWrapped)
	return p
}

// ProcessWrapperInstaller is a harness whose process wrapper can be set in
// the person's own settings (`lifeloop host apply --process-wrapper`), so
// background sessions started without `lifeloop run` are recorded too.
type ProcessWrapperInstaller interface {
	ProcessWrapped
	// InstallWrapper sets lifeloop's prefix as the wrapper in the
	// settings env locates, chaining the one set there, or with
	// w.Remove puts back the one lifeloop's chained. It returns the
	// settings file and whether it changed.
	InstallWrapper(env []string, w WrapperInstall) (path string, changed bool, err error)
}

// WrapperInstall is what InstallWrapper needs of lifeloop's prefix.
type WrapperInstall struct {
	// Prefix is lifeloop's prefix chaining chain (nil: none).
	Prefix func(chain []string) []string
	// Unchain says whether words are a lifeloop prefix, and which
	// wrapper it chains.
	Unchain func(words []string) (chain []string, ours bool)
	Remove  bool
}

// ProcessWrapperInstaller returns how the harness's process wrapper is
// set in the person's settings, or nil.
func (a *Adapter) ProcessWrapperInstaller() ProcessWrapperInstaller {
	p, _ := a.h.(ProcessWrapperInstaller)
	return p
}

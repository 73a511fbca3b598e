package adapters

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
	// WrappedSession reads, from the harness's own registry, the session
	// process pid serves and its working folder; ok is false while the
	// process serves none yet (a pre-started process waits to be handed
	// one).
	WrappedSession(env []string, pid int) (id, cwd string, ok bool)
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

// ProcessWrapped returns the harness's process-wrapper support, or nil.
func (a *Adapter) ProcessWrapped() ProcessWrapped {
	p, _ := a.h.(ProcessWrapped)
	return p
}

package adapters

import "context"

// Facts are what a launch knows about the harness it starts that its
// command lines may depend on. They are read once per session, with the
// harness's own environment, by lifeloop (ReadHelp, ReadVersion) and
// handed to the harness's argv methods (Adapter.WithFacts), which never
// run a process themselves.
type Facts struct {
	// Version is the harness's version, "" when it could not be told.
	Version string
	// Help is what the harness's --help printed; "" unless NeedsHelp
	// asked for it.
	Help string
}

// FactsTaker is a harness whose command lines depend on Facts.
type FactsTaker interface {
	// NeedsHelp reports whether the argv methods of a harness of version
	// (possibly "") need its --help to decide.
	NeedsHelp(version string) bool
	// WithFacts returns the harness with f handed to its argv methods.
	WithFacts(f Facts) Harness
}

// TakesFacts reports whether the adapter's command lines depend on Facts.
func (a *Adapter) TakesFacts() bool {
	_, ok := a.h.(FactsTaker)
	return ok
}

// NeedsHelp reports whether facts of version must carry the harness's
// --help (false for an adapter that takes no facts).
func (a *Adapter) NeedsHelp(version string) bool {
	t, ok := a.h.(FactsTaker)
	return ok && t.NeedsHelp(version)
}

// WithFacts returns a copy of the adapter whose argv methods know f; the
// adapter itself when it takes no facts.
func (a *Adapter) WithFacts(f Facts) *Adapter {
	t, ok := a.h.(FactsTaker)
	if !ok {
		return a
	}
	c := *a
	c.h = t.WithFacts(f)
	return &c
}

// ReadHelp returns what the harness argv starts prints for --help, run
// with env (the harness's own) and bounded by ctx and
// DefaultVersionTimeout; "" when it cannot be run.
func ReadHelp(ctx context.Context, argv, env []string, path string) string {
	ctx, cancel := context.WithTimeout(ctx, DefaultVersionTimeout)
	defer cancel()
	out, err := HarnessOutput(ctx, argv, env, path, []string{"--help"})
	if err != nil {
		return ""
	}
	return out
}

// ReadFacts reads the facts of the harness argv starts with env, for the
// adapter's argv methods: the version (the package.json, else
// --version), and --help when the adapter needs it for that version.
func (a *Adapter) ReadFacts(ctx context.Context, argv, env []string) Facts {
	var f Facts
	path := EnvValue(env, "PATH")
	if src, ok := a.VersionSource(); ok {
		f.Version = ReadVersion(ctx, argv, env, path, src)
	}
	if a.NeedsHelp(f.Version) {
		f.Help = ReadHelp(ctx, argv, env, path)
	}
	return f
}

package cli

import (
	"fmt"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/exitcode"
)

// hostWrapperRun is `host apply|remove --process-wrapper`: lifeloop set
// as (or taken out of) the harness's process wrapper in the person's own
// settings, chaining what was there.
func hostWrapperRun(o hostOptions, remove bool) error {
	a, err := o.Registry.Lookup(o.Adapter)
	if err != nil || a.ProcessWrapperInstaller() == nil {
		return usageErrorf("adapter %q starts no background sessions through a process wrapper lifeloop can set", o.Adapter)
	}
	prefixErr := error(nil)
	w := adapters.WrapperInstall{
		Prefix: func(chain []string) []string {
			p, err := ProcessWrapperPrefix(a.ID, chain)
			prefixErr = err
			return p
		},
		Unchain: func(words []string) ([]string, bool) {
			if len(words) < 2 || words[1] != "procwrap" {
				return nil, false
			}
			p, err := parseProcwrap(words[2:])
			return p.Chain, err == nil
		},
		Remove: remove,
	}
	path, changed, err := a.ProcessWrapperInstaller().InstallWrapper(o.Environ, w)
	if err == nil {
		err = prefixErr
	}
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	switch {
	case !changed && remove:
		fmt.Fprintf(o.Out, "%s: lifeloop is not the %s process wrapper; nothing changed\n", path, o.Adapter)
	case !changed:
		fmt.Fprintf(o.Out, "%s: lifeloop already is the %s process wrapper; nothing changed\n", path, o.Adapter)
	case remove:
		fmt.Fprintf(o.Out, "%s: lifeloop removed as the %s process wrapper (the one it chained is back)\n", path, o.Adapter)
	default:
		fmt.Fprintf(o.Out, "%s: lifeloop set as the %s process wrapper (a wrapper set before runs after it)\n", path, o.Adapter)
	}
	return nil
}

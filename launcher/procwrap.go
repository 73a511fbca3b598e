package launcher

import (
	"log/slog"

	"github.com/lifeloop/lifeloop/adapters"
)

// withProcessWrapper returns env with lifeloop set as the harness's
// process wrapper (Options.ProcessWrapper), when the harness starts
// background sessions through one; env unchanged otherwise, or when the
// person's own value cannot be chained (logged: the harness then runs
// its background sessions as the person's value says).
func withProcessWrapper(o Options, ad *adapters.Adapter, env []string, log *slog.Logger) []string {
	pw := ad.ProcessWrapped()
	if pw == nil || o.ProcessWrapper == nil {
		return env
	}
	vars, err := pw.WrapperEnv(func(chain []string) []string { return o.ProcessWrapper(ad.ID, chain) }, env)
	if err != nil {
		log.Warn("background sessions are not recorded", "err", err)
		return env
	}
	return replaceEnv(env, vars)
}

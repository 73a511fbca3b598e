package launcher

import (
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
)

// Harness processes are numbered in their session: 1 at the launch, one
// more at each relaunch, a continued session counting its gone wrapper's.
// The number is the count of session.starting receipts that started a
// process (a switch to a new harness session inside the process records
// one too, and starts none), so the exporter, counting the same receipts
// in the ledger, gives the process's first span the id the harness was
// handed at its start (Config.ProcessEnv).

// startsProcess reports whether a receipt of event ev with summary sum
// is a session.starting that starts a harness process.
func startsProcess(ev contract.Event, sum map[string]any) bool {
	if ev != contract.EventSessionStarting {
		return false
	}
	why, _ := sum[contract.SummaryReason].(string)
	return why != contract.HarnessSessionSwitched
}

// priorProcesses counts the processes a continued session's ledger
// already started.
func priorProcesses(prior []contract.LifecycleReceipt) int {
	n := 0
	for _, r := range prior {
		if startsProcess(r.Event, r.TelemetrySummary) {
			n++
		}
	}
	return n
}

// processEnv returns env for the harness process numbered n (at least 1)
// about to start: the variables vars (Config.ProcessEnv, may be nil)
// gives for its number replace their values in env.
func processEnv(vars func(n int) []string, n int, env []string) []string {
	if vars == nil {
		return env
	}
	return replaceEnv(env, vars(max(n, 1)))
}

// replaceEnv returns env with the variables of add set to their values
// in add, each once.
func replaceEnv(env, add []string) []string {
	keys := make(map[string]bool, len(add))
	for _, kv := range add {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return keys[k]
	})
	return append(out, add...)
}

// processEnvOf is Config.ProcessEnv for session id: Options.SessionEnv.
func processEnvOf(o Options, id string) func(n int) []string {
	if o.SessionEnv == nil {
		return nil
	}
	return func(n int) []string { return o.SessionEnv(id, n) }
}

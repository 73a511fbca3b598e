// Package opencode is OpenCode (npm opencode-ai). lifeloop wraps it like any
// process; no transcript parser or hook bridge exists for it.
//
// Measured offline with 1.18.33 (a provider in
// ~/.config/opencode/opencode.json pointing at an unreachable loopback
// port; `opencode run` first npm-installs the provider package into
// ~/.config/opencode, then retries without end): sessions are not files
// but rows of the SQLite database $XDG_DATA_HOME/opencode/opencode.db
// (~/.local/share/opencode, WAL mode) — tables session (directory,
// tokens_input/output/cache_read/cache_write, time_compacting), message
// (JSON data with role, parentID, tokens) and event (an ordered log:
// session.created.1, session.updated.1, message.updated.1, ...). lifeloop's
// JSONL tailer cannot follow it; an answered turn, usage and compaction
// were not verified without a model, and nothing is claimed from it.
package opencode

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is OpenCode to the registry.
type Harness struct{}

var (
	_ adapters.Harness   = Harness{}
	_ adapters.Telemetry = Harness{}
)

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "opencode", DisplayName: "OpenCode", Conformance: adapters.ConformancePre,
		Names:          []string{"opencode", "opencode-ai"},
		OrgLoopHarness: contract.HarnessOpenCode,
	}
}

// Evidence implements adapters.Harness: process supervision only.
func (Harness) Evidence() map[string]string { return adapters.WrapperEvidence() }

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("opencode", "OpenCode", contract.RolePrimaryWorker)
	m.ContextPressure.Evidence = contract.Ptr(adapters.NotImplemented + "; OpenCode keeps sessions in SQLite ($XDG_DATA_HOME/opencode/opencode.db: session, message, event tables), found offline; its token and compaction records could not be verified without a model")
	return m
}

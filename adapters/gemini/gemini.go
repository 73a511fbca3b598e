// Package gemini is Google's Gemini CLI (npm @google/gemini-cli). lifeloop wraps
// it like any process; no transcript parser or hook bridge exists for it.
//
// Measured offline with 0.61.0 (no model reachable): with
// GEMINI_API_KEY set, security.auth.selectedType "gemini-api-key" in
// ~/.gemini/settings.json and GEMINI_CLI_TRUST_WORKSPACE=true (else exit
// 41 "set an Auth method", 55 "not running in a trusted directory"),
// `gemini -p` writes $HOME/.gemini/tmp/<folder name>/chats/
// session-<YYYY-MM-DDThh-mm>-<id8>.jsonl: a first line {sessionId,
// projectHash = sha256 of the cwd, startTime, lastUpdated, kind} and
// {"$set":{"messages":[...]}} updates; ~/.gemini/projects.json maps the
// cwd to the folder name. Without a model it retries forever, so what an
// answered turn, token usage and compaction look like in that file is not
// verified, and nothing is claimed from it.
package gemini

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is Gemini CLI to the registry.
type Harness struct{}

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "gemini", DisplayName: "Gemini CLI", Conformance: adapters.ConformancePre, Aliases: []string{"gemini-cli"},
		Names: []string{"gemini", "gemini-cli", "@google/gemini-cli"},
	}
}

// Evidence implements adapters.Harness: process supervision only.
func (Harness) Evidence() map[string]string { return adapters.WrapperEvidence() }

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("gemini", "Gemini CLI", contract.RolePrimaryWorker)
	m.ContextPressure.Evidence = contract.Ptr(adapters.NotImplemented + "; the session file ($HOME/.gemini/tmp/<folder>/chats/session-*.jsonl) was found offline, but its turn and token records could not be verified without a model")
	return m
}

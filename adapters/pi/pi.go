// Package pi is the Pi coding agent (npm @mariozechner/pi-coding-agent, binary
// `pi`). lifeloop wraps it like any process; no transcript parser or hook
// bridge exists for it.
//
// Measured offline with 0.73.1 against the loopback mock model: a provider
// in ~/.pi/agent/models.json ({"api":"anthropic-messages", "baseUrl":<mock
// URL>, "apiKey", "models":[{"id"}]}) and `pi --offline --provider mock
// --model <id> -p PROMPT` complete a turn. Pi writes
// $HOME/.pi/agent/sessions/--<cwd>--/<start>_<id>.jsonl, where <cwd> loses
// its leading / and has / \ : turned into -, <start> is the ISO start time
// with : and . turned into -, and <id> is the session's uuidv7
// (PI_CODING_AGENT_DIR moves ~/.pi/agent, --session-dir the sessions). The
// directory is made at start, the file only once an assistant message
// exists (the entries so far written together, then one append per entry).
// The first line is {type:"session", version:3, id, timestamp, cwd}; then
// model_change and thinking_level_change entries and {type:"message", id,
// parentId, timestamp, message:{role, content, ...}} with role "user" or
// "assistant" (its docs add "toolResult" and others, not seen here). An
// assistant message carries usage {input, output, cacheRead, cacheWrite,
// totalTokens, cost} and stopReason ("stop"; a failed call is recorded as
// stopReason "error" with errorMessage and zero usage, once per retry).
// Auto-compaction (forced with a small keepRecentTokens and a mock
// reporting 190000 input tokens of a 200000 window) appended
// {type:"compaction", summary, firstKeptEntryId, tokensBefore, details,
// fromHook:false}. Tool calls, the interactive TUI and a real provider's
// usage were not exercised, and nothing is claimed from this file.
package pi

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is Pi to the registry.
type Harness struct{}

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "pi", DisplayName: "Pi", Conformance: adapters.ConformancePre,
		Names:          []string{"pi", "pi-coding-agent", "@mariozechner/pi-coding-agent"},
		OrgLoopHarness: contract.HarnessPi,
	}
}

// Evidence implements adapters.Harness: process supervision only.
func (Harness) Evidence() map[string]string { return adapters.WrapperEvidence() }

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	m := adapters.WrapperManifest("pi", "Pi", contract.RolePrimaryWorker)
	m.ContextPressure.Evidence = contract.Ptr(adapters.NotImplemented + "; Pi 0.73.1's session file ($HOME/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl) records per-assistant usage and compaction entries (tokensBefore), seen offline against the loopback mock only; lifeloop has no parser for it and a real provider's records were not verified")
	return m
}

package e2e

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// qwenSettings edits this environment's Qwen Code settings
// (~/.qwen/settings.json, which UseQwen wrote).
func qwenSettings(t *testing.T, env *testharness.HarnessEnv, edit func(map[string]any)) {
	t.Helper()
	editJSON(t, filepath.Join(env.QwenHome(), "settings.json"), edit)
}

// qwenNoSideAgent turns off the memory extractor Qwen Code runs after a
// turn: a call of its own (counted, TestUsageCountsSideAgents) that a
// one-shot makes or not depending on when it exits, and that a turn's
// frame takes or not depending on when the file is read.
func qwenNoSideAgent(t *testing.T, env *testharness.HarnessEnv) {
	t.Helper()
	qwenSettings(t, env, func(s map[string]any) {
		s["memory"] = map[string]any{"enableManagedAutoMemory": false}
	})
}

// TestUsageQwen (issue 54's "done when" for Qwen Code): a wrapped
// one-shot against the mock, whose reply reports known usage on the
// Anthropic wire, shows exactly the tokens Qwen Code's session file
// holds for its call on the turn's frame.ended and in the session's
// total, and the cost with its provenance (estimated from the price
// table; unknown for a model it does not price), in the ledger, `top
// --json`, `sessions --json`, `status --json`, a real Jaeger, a real
// log store, the OrgLoop and HCP projections and the stop webhook — the
// checks TestUsageEverywhere makes of the other harnesses. Qwen Code
// records the cache write in the prompt (1200 input + 300 cache write
// = 1500 input tokens), not apart.
func TestUsageQwen(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	logs := startLogStore(t)
	mock := startMock(t, mockmodel.Config{Reply: "Hello from lifeloop's mock model.",
		Usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77}})
	want := usageTokens{Input: 1500, CacheRead: 4000, Output: 77}
	for _, priced := range []bool{true, false} {
		env := testharness.NewHarnessEnv(t, mock)
		bin := env.UseQwen(t)
		qwenNoSideAgent(t, env)
		env.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", logs.logsEndpoint())
		state := stateDir(t)
		hook := startPostReceiver(t)
		model := pick(priced, testharness.QwenModel)
		res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--otlp", j.endpoint(),
			"--orgloop-webhook", hook.URL+"/webhook/lifeloop-sessions", "--", bin, "-m", model, "-p", "Say hello")
		if res.ExitCode != 0 {
			t.Fatalf("lifeloop run -- qwen: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		usd, prov := (1500*3+4000*0.3+77*15)/1e6, "estimated"
		if !priced {
			usd, prov = 0, "unknown"
		}
		what := "qwen " + model
		id, rs := onlySession(t, state)
		checkLedgerUsage(t, what, rs, want, model, usd, prov)
		checkListedUsage(t, what, env, state, want, usd, prov)
		checkJaegerUsage(t, what, j, state, id, want, usd, prov)
		checkStoredUsage(t, what, logs, id, want, usd, prov)
		checkProjectedUsage(t, what, env, ll, state, id, want, usd, prov)
		checkWebhookUsage(t, what, hook.posts(), want, usd, prov)
	}
}

// qwenUsageRecord is the session's totals Qwen Code writes itself when
// it ends (~/.qwen/usage_record.jsonl, its /stats by model): requests,
// prompt (cached included), cached and output tokens.
type qwenUsageRecord struct {
	SessionID string `json:"sessionId"`
	Models    map[string]struct {
		Requests     int `json:"requests"`
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
		CachedTokens int `json:"cachedTokens"`
	} `json:"models"`
}

// readQwenUsageRecords reads this environment's usage_record.jsonl.
func readQwenUsageRecords(t *testing.T, env *testharness.HarnessEnv) []qwenUsageRecord {
	t.Helper()
	var out []qwenUsageRecord
	for _, l := range readJSONL(t, filepath.Join(env.QwenHome(), "usage_record.jsonl")) {
		b, _ := json.Marshal(l)
		var r qwenUsageRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

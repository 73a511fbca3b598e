package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// The harnesses whose usage lives in a database, wrapped against the
// mock whose replies report known usage, with the mock model priced in
// their own configuration ($3, $15, $0.30 and $3.75 per million input,
// output, cache read and cache write tokens): each turn's frame.ended
// carries exactly the mock's tokens, session.ended their total, and the
// cost the harness recorded, native; `lifeloop usage` reads the same
// from the database. TestUsageEverywhere's opencode and openclaw cases
// check the same harnesses in the views (`top`, `sessions`, `status
// --json`) and the backends, priced and unpriced.

// dbUsage is the usage of each reply of the mock.
var dbUsage = mockmodel.Usage{InputTokens: 100, CacheCreationInputTokens: 2000, CacheReadInputTokens: 3000, OutputTokens: 7}

// dbUsageCost is what a reply costs at those prices.
var dbUsageCost = (100*3 + 7*15 + 3000*0.3 + 2000*3.75) / 1e6

// editJSON rewrites the JSON file at path through edit.
func editJSON(t *testing.T, path string, edit func(cfg map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkDBUsageStream checks the ledger of a wrapped session whose
// harness made calls model calls over turns turns.
func checkDBUsageStream(t *testing.T, rs []map[string]any, turns, calls int, model string) {
	t.Helper()
	var ends []map[string]any
	var ended map[string]any
	for _, r := range rs {
		switch r["event"] {
		case "frame.ended":
			ends = append(ends, usageBlock(r))
		case "session.ended":
			ended = usageBlock(r)
		}
	}
	if len(ends) != turns || ended == nil {
		t.Fatalf("%d frame.ended, session.ended's usage %v; want %d and a total\n%s", len(ends), ended, turns, describeStream(rs))
	}
	per := calls / turns
	for i, b := range ends {
		if b == nil {
			t.Fatalf("frame.ended %d has no usage\n%s", i, describeStream(rs))
		}
		checkUsageTokens(t, "turn", b, per, dbUsage)
		checkNativeCost(t, "turn", b, float64(per)*dbUsageCost)
		if m, _ := b["models"].(map[string]any); m[model] == nil {
			t.Fatalf("turn's models %v, want %s", b["models"], model)
		}
	}
	checkUsageTokens(t, "session", ended, calls, dbUsage)
	checkNativeCost(t, "session", ended, float64(calls)*dbUsageCost)
	hs, _ := ended["harness_sessions"].([]any)
	if len(hs) != 1 {
		t.Fatalf("harness_sessions %v, want one", ended["harness_sessions"])
	}
	checkUsageTokens(t, "harness session", hs[0].(map[string]any), calls, dbUsage)
}

// checkUsageReport checks that `lifeloop usage` reads the database the
// harness wrote: harness's calls with the mock's tokens and their native
// cost.
func checkUsageReport(t *testing.T, env *testharness.HarnessEnv, state, harness string, calls int) {
	t.Helper()
	var rep struct {
		Rows  []map[string]any `json:"rows"`
		Total map[string]any   `json:"total"`
	}
	llJSON(t, env, &rep, "usage", "--state-dir", state, "--by", "harness", "--json")
	n := float64(calls)
	want := map[string]any{"calls": n, "input_tokens": n * float64(dbUsage.InputTokens), "cache_read_tokens": n * float64(dbUsage.CacheReadInputTokens),
		"cache_write_tokens": n * float64(dbUsage.CacheCreationInputTokens), "output_tokens": n * float64(dbUsage.OutputTokens), "cost_provenance": "native"}
	for k, v := range want {
		if rep.Total[k] != v {
			t.Fatalf("lifeloop usage: total %v, want %s %v", rep.Total, k, v)
		}
	}
	if usd, _ := rep.Total["cost_usd"].(float64); math.Abs(usd-n*dbUsageCost) > 1e-9 || len(rep.Rows) != 1 || dig(rep.Rows[0], "keys", "harness") != harness {
		t.Fatalf("lifeloop usage: rows %v, total %v; want one of %s at $%.7f", rep.Rows, rep.Total, harness, n*dbUsageCost)
	}
}

func checkNativeCost(t *testing.T, what string, b map[string]any, usd float64) {
	t.Helper()
	c, _ := b["cost"].(map[string]any)
	got, _ := c["usd"].(float64)
	if c["provenance"] != "native" || math.Abs(got-usd) > 1e-9 {
		t.Fatalf("%s cost %v, want $%.7f native", what, c, usd)
	}
}

// TestUsageOnTheOpenCodeStream: `lifeloop run -- opencode run`, one
// turn of one call; OpenCode records each call's tokens and cost in its
// database.
func TestUsageOnTheOpenCodeStream(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Priced answer.", Usage: dbUsage})
	env := testharness.NewHarnessEnv(t, mock)
	editJSON(t, filepath.Join(env.OpenCodeConfigDir(), "opencode.json"), func(cfg map[string]any) {
		m := cfg["provider"].(map[string]any)["mock"].(map[string]any)["models"].(map[string]any)["mock-model"].(map[string]any)
		m["cost"] = map[string]any{"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}
	})
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "run", "say", "hello")
	if res.ExitCode != 0 {
		t.Fatalf("lifeloop run -- opencode run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	_, rs := onlySession(t, state)
	checkDBUsageStream(t, rs, 1, 1, "mock-model")
	checkUsageReport(t, env, state, "opencode", 1)
}

// TestUsageOnTheOpenClawStream: `lifeloop run -- openclaw agent --local`,
// one turn of one call; OpenClaw records each call's tokens and cost in
// its transcript rows.
func TestUsageOnTheOpenClawStream(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Priced answer.", Usage: dbUsage})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseOpenClaw(t)
	editJSON(t, filepath.Join(env.OpenClawStateDir(), "openclaw.json"), func(cfg map[string]any) {
		ms := cfg["models"].(map[string]any)["providers"].(map[string]any)["mock"].(map[string]any)["models"].([]any)
		ms[0].(map[string]any)["cost"] = map[string]any{"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
	})
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--no-hooks", "--", bin, "agent", "--local", "-m", "say hello")
	if res.ExitCode != 0 {
		t.Fatalf("lifeloop run -- openclaw agent --local: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	_, rs := onlySession(t, state)
	checkDBUsageStream(t, rs, 1, 1, "mock-model")
	checkUsageReport(t, env, state, "openclaw", 1)
}

package e2e

import (
	"math"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// usageBlock is the usage block of a receipt's telemetry_summary, nil
// when it has none.
func usageBlock(r map[string]any) map[string]any {
	sum, _ := r["telemetry_summary"].(map[string]any)
	u, _ := sum["usage"].(map[string]any)
	return u
}

// checkUsageTokens fails unless block counts calls calls of exactly
// these tokens.
func checkUsageTokens(t *testing.T, what string, block map[string]any, calls int, u mockmodel.Usage) {
	t.Helper()
	tok, _ := block["tokens"].(map[string]any)
	got := []any{block["calls"], tok["input"], tok["cache_read"], tok["cache_write"], tok["output"]}
	n := float64(calls)
	want := []any{n, n * float64(u.InputTokens), n * float64(u.CacheReadInputTokens), n * float64(u.CacheCreationInputTokens), n * float64(u.OutputTokens)}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: calls, input, cache read, cache write, output = %v, want %v\nblock: %v", what, got, want, block)
		}
	}
}

// TestUsageOnTheOneShotStream: `lifeloop run -- claude -p` against the
// mock, whose every reply reports known usage: the turn's frame.ended
// carries exactly those tokens, for the model the harness asked for,
// and session.ended the same as the session's and the harness session's
// total; the cost is estimated from the price table (Sonnet 4.5: $3, $15,
// $0.30 and $3.75 per million input, output, cache read and cache write
// tokens), and `status --json`, `sessions --json` and `top --json` say the same. A model no table prices
// costs unknown, without a figure.
func TestUsageOnTheOneShotStream(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	u := mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77}
	mock := startMock(t, mockmodel.Config{Reply: "Hello from lifeloop's mock model.", Usage: u})
	for _, tc := range []struct {
		model string
		usd   float64 // 0: unknown
	}{
		{"claude-sonnet-4-5", (1200*3 + 77*15 + 4000*0.3 + 300*3.75) / 1e6},
		{"lifeloop-unpriced-model", 0},
	} {
		env := testharness.NewHarnessEnv(t, mock)
		state := stateDir(t)
		if res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "--model", tc.model, "Say hello"); res.ExitCode != 0 {
			t.Fatalf("lifeloop run -- claude -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		_, rs := onlySession(t, state)
		var turns []map[string]any
		var ended map[string]any
		for _, r := range rs {
			switch r["event"] {
			case "frame.ended":
				if b := usageBlock(r); b != nil {
					turns = append(turns, b)
				}
			case "session.ended":
				ended = usageBlock(r)
			}
		}
		if len(turns) != 1 || ended == nil {
			t.Fatalf("%s: %d frame.ended with usage and session.ended's %v, want one and a total\n%s", tc.model, len(turns), ended, describeStream(rs))
		}
		checkUsageTokens(t, tc.model+" turn", turns[0], 1, u)
		checkUsageTokens(t, tc.model+" session", ended, 1, u)
		hs, _ := ended["harness_sessions"].([]any)
		if len(hs) != 1 {
			t.Fatalf("%s: harness_sessions %v, want one", tc.model, ended["harness_sessions"])
		}
		checkUsageTokens(t, tc.model+" harness session", hs[0].(map[string]any), 1, u)
		if m, _ := turns[0]["models"].(map[string]any); m[tc.model] == nil {
			t.Fatalf("turn's models %v, want %s", turns[0]["models"], tc.model)
		}
		for _, view := range []string{"sessions", "top"} {
			var listed []struct {
				Usage map[string]any `json:"usage"`
			}
			llJSON(t, env, &listed, view, "--state-dir", state, "--json")
			if len(listed) != 1 {
				t.Fatalf("%s --json: %d sessions, want 1", view, len(listed))
			}
			lu := listed[0].Usage
			want := map[string]any{"calls": 1.0, "input_tokens": float64(u.InputTokens), "cache_read_tokens": float64(u.CacheReadInputTokens),
				"cache_write_tokens": float64(u.CacheCreationInputTokens), "output_tokens": float64(u.OutputTokens)}
			for k, v := range want {
				if lu[k] != v {
					t.Fatalf("%s --json usage %v, want %s %v", view, lu, k, v)
				}
			}
			if tc.usd == 0 && (lu["cost_usd"] != nil || lu["cost_provenance"] != "unknown") || tc.usd != 0 && lu["cost_provenance"] != "estimated" {
				t.Fatalf("%s --json usage %v, want the cost's provenance %s", view, lu, map[bool]string{true: "unknown (cost_usd null)", false: "estimated"}[tc.usd == 0])
			}
		}
		var status struct {
			Usage map[string]any `json:"usage"`
		}
		llJSON(t, env, &status, "status", "--state-dir", state, "--latest", "--json")
		checkUsageTokens(t, tc.model+" status --json", status.Usage, 1, u)
		for what, b := range map[string]map[string]any{"turn": turns[0], "session": ended} {
			c, _ := b["cost"].(map[string]any)
			usd, has := c["usd"].(float64)
			switch {
			case tc.usd == 0 && (has || c["provenance"] != "unknown"):
				t.Fatalf("%s %s cost %v, want unknown without usd", tc.model, what, c)
			case tc.usd != 0 && (c["provenance"] != "estimated" || math.Abs(usd-tc.usd) > 1e-9):
				t.Fatalf("%s %s cost %v, want $%.7f estimated", tc.model, what, c, tc.usd)
			}
		}
	}
}

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestFreshRenewalResetsPressure: a Claude conversation driven to high
// pressure (80 200 tokens of a 100 000 window) is renewed fresh; the new
// conversation's first turn stays low (15 000 tokens). `lifeloop status
// --json` and `lifeloop top --json` then show the new conversation's
// 15% low, never the old one's 80% high — right after the relaunch they
// show no pressure at all (the old one no longer holds).
func TestFreshRenewalResetsPressure(t *testing.T) {
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	high := mockmodel.Usage{InputTokens: 3000, CacheCreationInputTokens: 2000, CacheReadInputTokens: 75000, OutputTokens: 200}
	low := mockmodel.Usage{InputTokens: 15000, OutputTokens: 100}
	mock := startMock(t, mockmodel.Config{Reply: "Reply.", UsageSequence: []mockmodel.Usage{high}, Usage: low})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	ses, _ := onlySession(t, state)
	term.Type("first prompt 7f3a")
	if err := term.WaitFor("first prompt 7f3a", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	waitSessionLedger(t, state, ses, "high pressure", func(rs []map[string]any) bool {
		return lastPressureLevel(rs) == "high"
	})
	if p := statusPressure(t, env, ll, state, ses); p["level"] != "high" {
		t.Fatalf("status before the renewal: pressure %v", p)
	}

	before := len(term.Output())
	if res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--fresh", ses); res.ExitCode != 0 {
		t.Fatalf("renew --fresh: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	testharness.ClaudeScreenReady(t, term, before)
	if p := statusPressure(t, env, ll, state, ses); p != nil {
		t.Errorf("status right after the fresh relaunch shows the old conversation's pressure: %v", p)
	}

	at := len(term.Output())
	term.Type("second prompt 9d1e")
	waitOutputAfter(t, term, at, "second prompt 9d1e", screenTimeout)
	term.Type("\r")
	waitSessionLedger(t, state, ses, "the new conversation's low pressure", func(rs []map[string]any) bool {
		return lastPressureLevel(rs) == "low"
	})
	p := statusPressure(t, env, ll, state, ses)
	if p["level"] != "low" || num(p["tokens"]) != 15100 || num(p["percent"]) != 15 {
		t.Errorf("status after the new conversation's turn: pressure %v, want low 15100 (15%%)", p)
	}
	res := env.Run(runTimeout, ll, "top", "--json", "--state-dir", state)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &rows); err != nil {
		t.Fatalf("top --json: %v\n%s", err, res.Stdout)
	}
	for _, r := range rows {
		if strings.HasSuffix(ses, strings.TrimPrefix(r["id"].(string), "ses_")) || r["id"] == ses {
			if lvl := dig(r, "pressure", "level"); lvl != "low" || num(dig(r, "pressure", "percent")) != 15 {
				t.Errorf("top --json pressure %v, want low 15%%", r["pressure"])
			}
		}
	}
	endSafeTUI(t, env, term)
}

// lastPressureLevel is the level of the last context.pressure_observed.
func lastPressureLevel(rs []map[string]any) any {
	return dig(lastOf(rs, "context.pressure_observed"), "telemetry_summary", "level")
}

// statusPressure is the pressure `lifeloop status --json` shows, or nil.
func statusPressure(t *testing.T, env *testharness.HarnessEnv, ll, state, ses string) map[string]any {
	t.Helper()
	res := env.Run(runTimeout, ll, "status", "--json", "--state-dir", state, ses)
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res.Stdout)
	}
	for _, path := range [][]string{{"pressure"}, {"summary", "pressure"}, {"live", "pressure"}} {
		if p, ok := dig(out, path...).(map[string]any); ok {
			return p
		}
	}
	return nil
}

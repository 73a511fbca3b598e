package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// usageTokens is a usage block's tokens by kind.
type usageTokens struct{ Input, CacheRead, CacheWrite, Output, Reasoning int }

// usageCase is one harness of TestUsageEverywhere: its one-shot against
// the mock, the usage the mock reports on its wire, the tokens the
// harness's files then hold (each wire has its own shape: see want),
// and the cost of the priced model with its provenance.
type usageCase struct {
	name string
	// argv is the one-shot's command line with model (priced, or the
	// unpriced one); nil for a harness whose reader is not wired here yet.
	argv  func(t *testing.T, env *testharness.HarnessEnv, priced bool) []string
	usage mockmodel.Usage
	want  usageTokens
	// model is the model the priced run records; usd its cost, prov its
	// provenance.
	model string
	usd   float64
	prov  string
}

// unpricedModel is a model no price table holds.
const unpricedModel = "lifeloop-unpriced-model"

// usageCases: Claude and Pi speak the Anthropic wire (input, cache read
// and cache write apart); Codex the Responses wire, whose input_tokens
// include the cached ones; Gemini's promptTokenCount includes the cached
// ones and its chat file has no cache write (the mock counts it in the
// prompt, so it is input there). Pi prices its calls itself (native,
// from models.json's cost: the test home's $3/$15/$0.30/$3.75), and so
// do OpenCode and OpenClaw, which speak the Anthropic wire too and keep
// their usage in a database (the same prices, written into their
// configuration by the case).
var usageCases = []usageCase{
	{
		name: "claude",
		argv: func(t *testing.T, _ *testharness.HarnessEnv, priced bool) []string {
			return []string{testharness.ClaudeBin(t), "-p", "--model", pick(priced, "claude-sonnet-4-5"), "Say hello"}
		},
		usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77},
		want:  usageTokens{Input: 1200, CacheRead: 4000, CacheWrite: 300, Output: 77},
		model: "claude-sonnet-4-5", usd: (1200*3 + 4000*0.3 + 300*3.75 + 77*15) / 1e6, prov: "estimated",
	},
	{
		name: "codex",
		argv: func(t *testing.T, _ *testharness.HarnessEnv, priced bool) []string {
			return []string{testharness.CodexBin(t), "exec", "--skip-git-repo-check", "-m", pick(priced, "gpt-5"), "Say hello"}
		},
		usage: mockmodel.Usage{InputTokens: 5200, CacheReadInputTokens: 4000, OutputTokens: 77},
		want:  usageTokens{Input: 1200, CacheRead: 4000, Output: 77},
		model: "gpt-5", usd: (1200*1.25 + 4000*0.125 + 77*10) / 1e6, prov: "estimated",
	},
	{
		name: "gemini",
		argv: func(t *testing.T, _ *testharness.HarnessEnv, priced bool) []string {
			return []string{testharness.GeminiBin(t), "-m", pick(priced, testharness.GeminiModel), "-p", "Say hello"}
		},
		usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77},
		want:  usageTokens{Input: 1500, CacheRead: 4000, Output: 77},
		model: testharness.GeminiModel, usd: (1500*0.3 + 4000*0.03 + 77*2.5) / 1e6, prov: "estimated",
	},
	{
		name: "pi",
		argv: func(t *testing.T, env *testharness.HarnessEnv, priced bool) []string {
			bin := env.UsePi(t)
			if !priced {
				unpricePi(t, env)
			}
			return []string{bin, "-p", "Say hello"}
		},
		usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77},
		want:  usageTokens{Input: 1200, CacheRead: 4000, CacheWrite: 300, Output: 77},
		model: "mock-model", usd: (1200*3 + 4000*0.3 + 300*3.75 + 77*15) / 1e6, prov: "native",
	},
	{
		// Copilot CLI speaks the Anthropic wire to the mock (a custom
		// provider) and records each call's numbers in its
		// session.usage_record.
		name: "copilot",
		argv: func(t *testing.T, env *testharness.HarnessEnv, priced bool) []string {
			return []string{env.UseCopilot(t), "-p", "Say hello", "--model", pick(priced, testharness.CopilotModel)}
		},
		usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77},
		want:  usageTokens{Input: 1200, CacheRead: 4000, CacheWrite: 300, Output: 77},
		model: testharness.CopilotModel, usd: (1200*3 + 4000*0.3 + 300*3.75 + 77*15) / 1e6, prov: "estimated",
	},
	{
		// OpenCode records each call's tokens and cost in its database
		// (adapters.UsageStore); it prices the call itself from the
		// model's configured cost (native). Unpriced: a model with no
		// cost configured, which OpenCode records at 0 and the reader
		// leaves to the price table, which has no price for it.
		name: "opencode",
		argv: func(t *testing.T, env *testharness.HarnessEnv, priced bool) []string {
			bin := testharness.OpenCodeBin(t)
			editJSON(t, filepath.Join(env.OpenCodeConfigDir(), "opencode.json"), func(cfg map[string]any) {
				ms := cfg["provider"].(map[string]any)["mock"].(map[string]any)["models"].(map[string]any)
				m := ms["mock-model"].(map[string]any)
				if priced {
					m["cost"] = map[string]any{"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}
					return
				}
				delete(ms, "mock-model")
				ms[unpricedModel] = m
				cfg["model"] = "mock/" + unpricedModel
			})
			return []string{bin, "run", "Say hello"}
		},
		usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77},
		want:  usageTokens{Input: 1200, CacheRead: 4000, CacheWrite: 300, Output: 77},
		model: "mock-model", usd: (1200*3 + 4000*0.3 + 300*3.75 + 77*15) / 1e6, prov: "native",
	},
	{
		// OpenClaw records each call in its database's transcript rows,
		// in Pi's entry shapes, with the cost it priced from the model's
		// configuration (native); unpriced as OpenCode.
		name: "openclaw",
		argv: func(t *testing.T, env *testharness.HarnessEnv, priced bool) []string {
			bin := env.UseOpenClaw(t)
			editJSON(t, filepath.Join(env.OpenClawStateDir(), "openclaw.json"), func(cfg map[string]any) {
				m := cfg["models"].(map[string]any)["providers"].(map[string]any)["mock"].(map[string]any)["models"].([]any)[0].(map[string]any)
				if priced {
					m["cost"] = map[string]any{"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
					return
				}
				m["id"] = unpricedModel
				cfg["agents"].(map[string]any)["defaults"].(map[string]any)["model"].(map[string]any)["primary"] = "mock/" + unpricedModel
			})
			return []string{bin, "agent", "--local", "-m", "Say hello"}
		},
		usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77},
		want:  usageTokens{Input: 1200, CacheRead: 4000, CacheWrite: 300, Output: 77},
		model: "mock-model", usd: (1200*3 + 4000*0.3 + 300*3.75 + 77*15) / 1e6, prov: "native",
	},
}

// pick is model when priced, else unpricedModel.
func pick(priced bool, model string) string {
	if priced {
		return model
	}
	return unpricedModel
}

// unpricePi renames the mock model of Pi's models.json to one no table
// prices and takes its cost away (Pi then records a cost of 0, which
// the reader leaves to the price table).
func unpricePi(t *testing.T, env *testharness.HarnessEnv) {
	t.Helper()
	path := filepath.Join(env.PiAgentDir(), "models.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var models map[string]map[string]map[string]any
	if err := json.Unmarshal(b, &models); err != nil {
		t.Fatal(err)
	}
	for _, m := range models["providers"]["mock"]["models"].([]any) {
		m.(map[string]any)["id"] = unpricedModel
		m.(map[string]any)["cost"] = map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
	}
	if b, err = json.Marshal(models); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env.PiSettings(t, map[string]any{"defaultModel": unpricedModel})
}

// TestUsageEverywhere (issue 54's "done when"): a wrapped one-shot of
// each harness against the mock, whose reply reports known usage, shows
// exactly the tokens the harness's files hold for it on the turn's
// frame.ended and in the session's total, and the cost with its
// provenance, in the ledger, `top --json`, `status --json`, a real
// Jaeger (the frame span's gen_ai.usage.* and lifeloop.cost.*, the cost
// counter by provenance) and a real log store (VictoriaLogs: the turn's
// and the end's records, whose body is the receipt), and its OrgLoop
// and HCP projections (`receipts --format orgloop|hcp`) and the stop
// `--orgloop-webhook` posts (meta.usage); a model no table prices shows unknown, never
// 0, in each. Run one harness at a time: -run 'TestUsageEverywhere/codex'.
func TestUsageEverywhere(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	logs := startLogStore(t)
	for _, hc := range usageCases {
		t.Run(hc.name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{Reply: "Hello from lifeloop's mock model.", Usage: hc.usage})
			for _, priced := range []bool{true, false} {
				env := testharness.NewHarnessEnv(t, mock)
				argv := hc.argv(t, env, priced)
				env.UseNodeFor(t, argv[0])
				env.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", logs.logsEndpoint())
				state := stateDir(t)
				hook := startPostReceiver(t)
				res := env.Run(runTimeout, ll, append([]string{"run", "--state-dir", state, "--otlp", j.endpoint(),
					"--orgloop-webhook", hook.URL + "/webhook/lifeloop-sessions", "--"}, argv...)...)
				if res.ExitCode != 0 {
					t.Fatalf("lifeloop run -- %s: exit %d\nstdout: %s\nstderr: %s", hc.name, res.ExitCode, res.Stdout, res.Stderr)
				}
				model, usd, prov := hc.model, hc.usd, hc.prov
				if !priced {
					model, usd, prov = unpricedModel, 0, "unknown"
				}
				what := hc.name + " " + model
				id, rs := onlySession(t, state)
				checkLedgerUsage(t, what, rs, hc.want, model, usd, prov)
				checkListedUsage(t, what, env, state, hc.want, usd, prov)
				checkJaegerUsage(t, what, j, state, id, hc.want, usd, prov)
				checkStoredUsage(t, what, logs, id, hc.want, usd, prov)
				checkProjectedUsage(t, what, env, ll, state, id, hc.want, usd, prov)
				checkWebhookUsage(t, what, hook.posts(), hc.want, usd, prov)
			}
		})
	}
}

// checkLedgerUsage: one turn's frame.ended carries want for model, and
// session.ended the same as the session's and its harness session's
// total, each with the cost.
func checkLedgerUsage(t *testing.T, what string, rs []map[string]any, want usageTokens, model string, usd float64, prov string) {
	t.Helper()
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
		t.Fatalf("%s: %d frame.ended with usage and session.ended's %v, want one and a total\n%s", what, len(turns), ended, describeStream(rs))
	}
	hs, _ := ended["harness_sessions"].([]any)
	if len(hs) != 1 {
		t.Fatalf("%s: harness_sessions %v, want one", what, ended["harness_sessions"])
	}
	m, _ := turns[0]["models"].(map[string]any)
	if len(m) != 1 || m[model] == nil {
		t.Fatalf("%s: turn's models %v, want %s alone", what, turns[0]["models"], model)
	}
	for where, b := range map[string]map[string]any{"turn": turns[0], "session": ended, "harness session": hs[0].(map[string]any), "model": m[model].(map[string]any)} {
		checkBlockTokens(t, what+" "+where, b, want)
		checkBlockCost(t, what+" "+where, b["cost"], usd, prov)
	}
}

// checkBlockTokens fails unless block counts one call of exactly want.
func checkBlockTokens(t *testing.T, what string, block map[string]any, want usageTokens) {
	t.Helper()
	tok, _ := block["tokens"].(map[string]any)
	got := fmt.Sprint(block["calls"], tok["input"], tok["cache_read"], tok["cache_write"], tok["output"], tok["reasoning"])
	w := fmt.Sprint(1, want.Input, want.CacheRead, want.CacheWrite, want.Output, want.Reasoning)
	if got != w {
		t.Errorf("%s: calls, input, cache read, cache write, output, reasoning = %s, want %s\nblock: %v", what, got, w, block)
	}
}

// checkBlockCost fails unless cost is usd with provenance prov, or
// unknown without a figure when usd is 0.
func checkBlockCost(t *testing.T, what string, cost any, usd float64, prov string) {
	t.Helper()
	c, _ := cost.(map[string]any)
	got, has := c["usd"].(float64)
	switch {
	case c["provenance"] != prov:
		t.Errorf("%s: cost %v, want provenance %s", what, c, prov)
	case usd == 0 && has:
		t.Errorf("%s: cost %v, want no figure (unknown, never 0)", what, c)
	case usd != 0 && math.Abs(got-usd) > 1e-9:
		t.Errorf("%s: cost %v, want $%.7f", what, c, usd)
	}
}

// checkListedUsage: `top --json` and `sessions --json` show the
// session's tokens and its cost with the provenance in their flat
// columns, `top --json --totals` the same as the totals of its one
// session, `status --json` in the session's usage block.
func checkListedUsage(t *testing.T, what string, env *testharness.HarnessEnv, state string, want usageTokens, usd float64, prov string) {
	t.Helper()
	views := map[string]map[string]any{}
	for _, view := range []string{"sessions", "top"} {
		var listed []struct {
			Usage map[string]any `json:"usage"`
		}
		llJSON(t, env, &listed, view, "--state-dir", state, "--json")
		if len(listed) != 1 {
			t.Fatalf("%s: %s --json lists %d sessions, want 1", what, view, len(listed))
		}
		views[view+" --json"] = listed[0].Usage
	}
	// top --json --totals: the one session's rows and its usage as the
	// totals, the unpriced session counted.
	var totals struct {
		Sessions []struct {
			Usage map[string]any `json:"usage"`
		} `json:"sessions"`
		Totals map[string]any `json:"totals"`
	}
	llJSON(t, env, &totals, "top", "--state-dir", state, "--json", "--totals")
	if len(totals.Sessions) != 1 {
		t.Fatalf("%s: top --json --totals lists %d sessions, want 1", what, len(totals.Sessions))
	}
	views["top --json --totals"] = totals.Totals
	unknown := 0.0
	if usd == 0 {
		unknown = 1
	}
	if tt := totals.Totals; tt["sessions"] != 1.0 || tt["sessions_with_usage"] != 1.0 || tt["unknown_cost_sessions"] != unknown {
		t.Errorf("%s: top --json --totals: totals %v, want 1 session with usage, %v unknown", what, tt, unknown)
	}
	var status struct {
		Usage map[string]any `json:"usage"`
	}
	llJSON(t, env, &status, "status", "--state-dir", state, "--latest", "--json")
	// status --json has the session's block as session.ended carries it.
	checkBlockTokens(t, what+" status --json", status.Usage, want)
	checkBlockCost(t, what+" status --json", status.Usage["cost"], usd, prov)
	for view, u := range views {
		got := fmt.Sprint(u["calls"], u["input_tokens"], u["cache_read_tokens"], u["cache_write_tokens"], u["output_tokens"])
		if w := fmt.Sprint(1, want.Input, want.CacheRead, want.CacheWrite, want.Output); got != w {
			t.Errorf("%s: %s usage calls, input, cache read, cache write, output = %s, want %s\n%v", what, view, got, w, u)
		}
		got2, has := u["cost_usd"].(float64)
		switch {
		case u["cost_provenance"] != prov:
			t.Errorf("%s: %s usage %v, want cost_provenance %s", what, view, u, prov)
		case usd == 0 && (has || u["cost_usd"] != nil):
			t.Errorf("%s: %s usage %v, want cost_usd null (unknown, never 0)", what, view, u)
		case usd != 0 && math.Abs(got2-usd) > 1e-9:
			t.Errorf("%s: %s usage cost_usd %v, want %.7f", what, view, u["cost_usd"], usd)
		}
	}
}

// checkJaegerUsage: the session's trace in Jaeger has the turn's frame
// span with want in gen_ai.usage.* (input counting the cached tokens, as
// the convention does) and the cost's provenance, its figure only when
// priced; the backend's cost counter has the figure under the
// provenance, and none when unknown.
func checkJaegerUsage(t *testing.T, what string, j *jaegerServer, state, id string, want usageTokens, usd float64, prov string) {
	t.Helper()
	spans := checkTrace(t, j, state, id)
	var frames []jaegerSpan
	for _, s := range spans {
		if s.OperationName == otelmap.SpanFrame && s.tag(string(otelmap.AttrCostProvenance)) != nil {
			frames = append(frames, s)
		}
	}
	if len(frames) != 1 {
		t.Fatalf("%s: %d frame spans with usage in jaeger, want 1", what, len(frames))
	}
	f := frames[0]
	num := func(k string) any {
		v := f.tag(k)
		if x, ok := v.(float64); ok {
			return int(x)
		}
		return v
	}
	got := fmt.Sprint(num(string(otelmap.AttrUsageInput)), num(string(otelmap.AttrUsageCacheRead)), num(string(otelmap.AttrUsageCacheWrite)),
		num(string(otelmap.AttrUsageOutput)), num(string(otelmap.AttrUsageCalls)))
	if w := fmt.Sprint(want.Input+want.CacheRead+want.CacheWrite, want.CacheRead, want.CacheWrite, want.Output, 1); got != w {
		t.Errorf("%s: jaeger frame span input, cache read, cache write, output, calls = %s, want %s\ntags: %v", what, got, w, f.Tags)
	}
	if p := f.tag(string(otelmap.AttrCostProvenance)); p != prov {
		t.Errorf("%s: jaeger frame span %s = %v, want %s", what, otelmap.AttrCostProvenance, p, prov)
	}
	c, has := f.tag(string(otelmap.AttrCostUSD)).(float64)
	switch {
	case usd == 0 && has:
		t.Errorf("%s: jaeger frame span has %s %v for an unpriced model", what, otelmap.AttrCostUSD, c)
	case usd != 0 && math.Abs(c-usd) > 1e-9:
		t.Errorf("%s: jaeger frame span %s %v, want %.7f", what, otelmap.AttrCostUSD, f.tag(string(otelmap.AttrCostUSD)), usd)
	}
	metrics := string(j.get(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", j.prom)))
	var costLines []string
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "lifeloop_cost_usd") && strings.Contains(line, `instance="`+id+`"`) {
			costLines = append(costLines, line)
		}
	}
	if usd == 0 {
		if len(costLines) != 0 {
			t.Errorf("%s: the backend counts a cost for an unpriced model: %v", what, costLines)
		}
		return
	}
	if len(costLines) != 1 || !strings.Contains(costLines[0], `lifeloop_cost_provenance="`+prov+`"`) {
		t.Fatalf("%s: the backend's cost counter %v, want one line of provenance %s", what, costLines, prov)
	}
	v, err := strconv.ParseFloat(costLines[0][strings.LastIndexByte(costLines[0], ' ')+1:], 64)
	if err != nil || math.Abs(v-usd) > 1e-9 {
		t.Errorf("%s: the backend's cost counter %s, want %.7f", what, costLines[0], usd)
	}
}

// checkStoredUsage: the log store's records of the turn's frame.ended
// and of session.ended (their body is the receipt) carry want and the
// cost, as the ledger does.
func checkStoredUsage(t *testing.T, what string, l *logStore, id string, want usageTokens, usd float64, prov string) {
	t.Helper()
	deadline := time.Now().Add(runTimeout)
	for {
		found := map[string]map[string]any{}
		var recs []map[string]string
		for _, rec := range l.records(t, id) {
			ev := rec["event_name"]
			if ev != "frame.ended" && ev != "session.ended" {
				continue
			}
			recs = append(recs, rec)
			if b := storedUsage(rec); b != nil {
				found[ev] = b
			}
		}
		if len(found) == 2 {
			for ev, b := range found {
				checkBlockTokens(t, what+" log store "+ev, b, want)
				checkBlockCost(t, what+" log store "+ev, b["cost"], usd, prov)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the log store has usage on %d of the turn's and the end's records\n%v", what, len(found), recs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// storedUsage is the usage block of a stored record whose body is a
// receipt: from its message (the body as JSON) or, where the store
// flattened the body into fields, from those under
// telemetry_summary.usage.
func storedUsage(rec map[string]string) map[string]any {
	var r map[string]any
	if json.Unmarshal([]byte(rec["_msg"]), &r) == nil {
		if b := usageBlock(r); b != nil {
			return b
		}
	}
	const prefix = "telemetry_summary.usage."
	b := map[string]any{}
	for k, v := range rec {
		i := strings.Index(k, prefix)
		if i < 0 {
			continue
		}
		path := strings.Split(k[i+len(prefix):], ".")
		at := b
		for _, p := range path[:len(path)-1] {
			next, _ := at[p].(map[string]any)
			if next == nil {
				next = map[string]any{}
				at[p] = next
			}
			at = next
		}
		var x any = v
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			x = f
		}
		at[path[len(path)-1]] = x
	}
	if len(b) == 0 {
		return nil
	}
	return b
}

// checkProjectedUsage: `lifeloop receipts --format orgloop` gives the
// turn's active/idle event and the stop want and the cost as
// payload.usage; `--format hcp` the turn's frame.ended progress and the
// end's state_changed as metadata.usage.
func checkProjectedUsage(t *testing.T, what string, env *testharness.HarnessEnv, ll, state, id string, want usageTokens, usd float64, prov string) {
	t.Helper()
	lines := func(format string) []string {
		res := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--format", format, id)
		if res.ExitCode != 0 {
			t.Fatalf("%s: receipts --format %s: exit %d: %s", what, format, res.ExitCode, res.Stderr)
		}
		return strings.Split(strings.TrimSpace(res.Stdout), "\n")
	}
	found := map[string]map[string]any{}
	for _, line := range lines("orgloop") {
		var ev struct {
			Payload struct {
				Lifecycle struct {
					Phase  string `json:"phase"`
					Reason string `json:"reason"`
				} `json:"lifecycle"`
				Usage map[string]any `json:"usage"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%s: orgloop: %v: %s", what, err, line)
		}
		if ev.Payload.Usage != nil {
			key := "orgloop " + ev.Payload.Lifecycle.Phase + "/" + ev.Payload.Lifecycle.Reason
			if found[key] != nil {
				t.Errorf("%s: two %s events with usage", what, key)
			}
			found[key] = ev.Payload.Usage
		}
	}
	for _, line := range lines("hcp") {
		var e struct {
			Payload struct {
				EventType string         `json:"event_type"`
				Data      map[string]any `json:"data"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s: hcp: %v: %s", what, err, line)
		}
		meta, _ := e.Payload.Data["metadata"].(map[string]any)
		if u, _ := meta["usage"].(map[string]any); u != nil {
			at := e.Payload.Data["stage"] // a progress's
			if e.Payload.EventType == "state_changed" {
				at = e.Payload.Data["to_state"]
			}
			found[fmt.Sprint("hcp ", e.Payload.EventType, " ", at)] = u
		}
	}
	keys := make([]string, 0, len(found))
	for k, b := range found {
		keys = append(keys, k)
		checkBlockTokens(t, what+" "+k, b, want)
		checkBlockCost(t, what+" "+k, b["cost"], usd, prov)
	}
	slices.Sort(keys)
	if w := "[hcp progress frame.ended hcp state_changed COMPLETED orgloop active/idle orgloop completed/exit_code_0]"; fmt.Sprint(keys) != w {
		t.Errorf("%s: usage on %v, want %s", what, keys, w)
	}
}

// postReceiver is a webhook receiver on 127.0.0.1 that keeps every
// JSON body posted to it.
type postReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []map[string]any
}

// startPostReceiver starts a postReceiver, closed by the test's cleanup.
func startPostReceiver(t *testing.T) *postReceiver {
	t.Helper()
	p := &postReceiver{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.got = append(p.got, v)
		p.mu.Unlock()
	}))
	t.Cleanup(p.Close)
	return p
}

// posts returns the bodies received so far.
func (p *postReceiver) posts() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got)
}

// checkWebhookUsage: the session's start and stop were posted, the stop
// with want and the cost as meta.usage, the start without usage.
func checkWebhookUsage(t *testing.T, what string, posts []map[string]any, want usageTokens, usd float64, prov string) {
	t.Helper()
	if len(posts) != 2 || posts[0]["hook_type"] != "start" || posts[1]["hook_type"] != "stop" {
		t.Fatalf("%s: webhook posts %v, want a start and a stop", what, posts)
	}
	if dig(posts[0], "meta", "usage") != nil {
		t.Errorf("%s: the start post has meta.usage %v", what, dig(posts[0], "meta", "usage"))
	}
	u, _ := dig(posts[1], "meta", "usage").(map[string]any)
	checkBlockTokens(t, what+" webhook stop meta.usage", u, want)
	checkBlockCost(t, what+" webhook stop meta.usage", u["cost"], usd, prov)
}

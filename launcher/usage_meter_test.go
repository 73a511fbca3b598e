package launcher

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/observe"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// usageOf is the usage block of m's summary, through JSON as the ledger
// keeps it; nil when m has none.
func usageOf(t *testing.T, m Moment) map[string]any {
	t.Helper()
	b, err := json.Marshal(m.Summary[usageKey])
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantTokens checks a block's tokens and calls.
func wantTokens(t *testing.T, what string, b map[string]any, calls, input, cacheRead, cacheWrite, output float64) {
	t.Helper()
	tok, _ := b["tokens"].(map[string]any)
	got := []any{b["calls"], tok["input"], tok["cache_read"], tok["cache_write"], tok["output"]}
	want := []any{calls, input, cacheRead, cacheWrite, output}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: calls, input, cache read, cache write, output = %v, want %v (block %v)", what, got, want, b)
		}
	}
}

// TestFramesCarryUsage: under a wrapped session whose transcript is a
// recorded one (two turns: a tool turn of two calls, then a reply after
// a compaction), written at once, each turn's frame.ended carries the
// tokens of the calls written between its prompt and the next, each
// call once, priced from the table (estimated); status and session.ended
// carry the total and the harness session's.
func TestFramesCarryUsage(t *testing.T) {
	lines := shifted(t, filepath.Join("..", "internal", "usage", "testdata", "home", ".claude", "projects", "-home-dev-project", "compact.jsonl"), time.Now().Add(time.Second))
	second := -1
	for i, l := range lines {
		if strings.Contains(l, `"second prompt"`) {
			second = i
		}
	}
	if second < 0 {
		t.Fatal("the sample no longer has a second prompt")
	}
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	if err := os.WriteFile(path, []byte(lines[0]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	appendLines := func(ls []string) {
		fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteString(strings.Join(ls, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
	}

	f, ft := renewFixture(t)
	f.cfg.ControlSocket = control.SocketIn(statedir.SessionDir(f.root, f.cfg.Record.ID))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	meter := newUsageMeter(f.cfg.Adapter, env, slog.New(slog.DiscardHandler))
	tel := &telemetryRunner{ctx: ctx, log: slog.New(slog.DiscardHandler), ad: f.cfg.Adapter, usage: meter, opts: observe.Options{
		Harness: f.cfg.Adapter.Telemetry(), Env: env, Cwd: t.TempDir(), Path: path, FromStart: true, Now: time.Now,
	}}
	defer tel.stop()
	f.cfg.Telemetry, f.cfg.Observations = tel, tel.start("", time.Now())
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	testutil.WaitFor(t, func() bool {
		meter.mu.Lock()
		defer meter.mu.Unlock()
		return len(meter.files) == 1
	})

	appendLines(lines[1:second])
	appendLines(lines[second:])
	testutil.WaitFor(t, func() bool { return len(turnEnds(f)) == 2 })
	var st control.Status
	if err := callCtl(t, f, control.OpStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	wantTokens(t, "status", usageOf(t, Moment{Summary: map[string]any{usageKey: st.Usage}}), 3, 6012, 361000, 14000, 605)
	endSession(ft, done)

	var turns []map[string]any
	var ended map[string]any
	f.rec.mu.Lock()
	for _, m := range f.rec.moments {
		switch {
		case m.Event == contract.EventFrameEnded && m.Summary[usageKey] != nil:
			turns = append(turns, usageOf(t, m))
		case m.Event == contract.EventSessionEnded:
			ended = usageOf(t, m)
		}
	}
	f.rec.mu.Unlock()
	if len(turns) != 2 {
		t.Fatalf("%d frame.ended with usage, want 2: %v", len(turns), turns)
	}
	wantTokens(t, "first turn", turns[0], 2, 6000, 361000, 14000, 600)
	wantTokens(t, "second turn", turns[1], 1, 12, 0, 0, 5)
	wantTokens(t, "session", ended, 3, 6012, 361000, 14000, 605)
	// claude-opus-4-8: $5, $25, $0.50 and $6.25 per million input,
	// output, cache read and cache write tokens.
	wantCost := func(what string, b map[string]any, usd float64) {
		t.Helper()
		c, _ := b["cost"].(map[string]any)
		got, _ := c["usd"].(float64)
		if c["provenance"] != "estimated" || got < usd-1e-9 || got > usd+1e-9 {
			t.Fatalf("%s cost %v, want $%.6f estimated", what, c, usd)
		}
	}
	wantCost("first turn", turns[0], (6000*5+600*25+361000*0.5+14000*6.25)/1e6)
	wantCost("session", ended, (6012*5+605*25+361000*0.5+14000*6.25)/1e6)
	if m, _ := turns[1]["models"].(map[string]any); m["claude-opus-4-8"] == nil {
		t.Fatalf("second turn's models %v, want claude-opus-4-8", turns[1]["models"])
	}
	hs, _ := ended["harness_sessions"].([]any)
	if len(hs) != 1 {
		t.Fatalf("session.ended harness_sessions %v, want one", ended["harness_sessions"])
	}
	wantTokens(t, "harness session", hs[0].(map[string]any), 3, 6012, 361000, 14000, 605)
}

// TestUnpricedModelIsUnknown: a call of a model no table prices costs
// unknown, its usd left out (never 0); beside a priced call the known
// part is kept and the provenance says both.
func TestUnpricedModelIsUnknown(t *testing.T) {
	f, _ := renewFixture(t)
	u := newUsageMeter(f.cfg.Adapter, []string{"HOME=" + t.TempDir()}, slog.New(slog.DiscardHandler))
	u.count(adapters.UsageEntry{SessionID: "s", Model: "no-such-model-anywhere", Tokens: adapters.UsageTokens{Input: 10, Output: 5}})
	b := u.turnEnded("")
	c, _ := b["cost"].(map[string]any)
	if _, ok := c["usd"]; ok || c["provenance"] != "unknown" {
		t.Fatalf("cost %v, want provenance unknown and no usd", c)
	}
	u.count(adapters.UsageEntry{SessionID: "s", Model: "claude-opus-4-8", Tokens: adapters.UsageTokens{Input: 1000000}})
	c, _ = u.sessionEnded()["cost"].(map[string]any)
	if c["provenance"] != "estimated+unknown" || c["usd"] != 5.0 {
		t.Fatalf("session cost %v, want $5 estimated+unknown", c)
	}
}

// turnEnds are the frame.ended moments f recorded.
func turnEnds(f *fixture) []Moment {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	var out []Moment
	for _, m := range f.rec.moments {
		if m.Event == contract.EventFrameEnded {
			out = append(out, m)
		}
	}
	return out
}

// TestUsagePerHarnessSession: across a renewal, session.ended's block
// sums every harness session's calls and keeps each one's, in the order
// first seen.
func TestUsagePerHarnessSession(t *testing.T) {
	f, _ := renewFixture(t)
	u := newUsageMeter(f.cfg.Adapter, []string{"HOME=" + t.TempDir()}, slog.New(slog.DiscardHandler))
	u.count(adapters.UsageEntry{SessionID: "first", Model: "claude-opus-4-8", Tokens: adapters.UsageTokens{Input: 10, Output: 1}})
	u.count(adapters.UsageEntry{SessionID: "second", Model: "claude-opus-4-8", Tokens: adapters.UsageTokens{Input: 20, Output: 2}})
	u.count(adapters.UsageEntry{SessionID: "second", Model: "claude-opus-4-8", Tokens: adapters.UsageTokens{Input: 30, Output: 3}})
	b := usageOf(t, Moment{Summary: map[string]any{usageKey: u.sessionEnded()}})
	wantTokens(t, "wrapped session", b, 3, 60, 0, 0, 6)
	hs, _ := b["harness_sessions"].([]any)
	if len(hs) != 2 {
		t.Fatalf("harness_sessions %v, want two", b["harness_sessions"])
	}
	for i, want := range []struct {
		id            string
		calls, in, ou float64
	}{{"first", 1, 10, 1}, {"second", 2, 50, 5}} {
		h := hs[i].(map[string]any)
		if h["harness_session_id"] != want.id {
			t.Fatalf("harness session %d is %v, want %s", i, h["harness_session_id"], want.id)
		}
		wantTokens(t, want.id, h, want.calls, want.in, 0, 0, want.ou)
	}
}

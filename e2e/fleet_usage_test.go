package e2e

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/amqpsink/rabbittest"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestFleetTopTotal: two real Claude Code one-shots on two machines
// publish to a real RabbitMQ broker, one on a priced model and one on a
// model no table prices; `lifeloop top --fleet` sums them — `--json
// --totals` gives both sessions' tokens, the priced one's cost with the
// provenances joined and one session unpriced, and the table's last line
// says the same, never a dollar figure for the unknown part.
func TestFleetTopTotal(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	broker, err := rabbittest.New()
	if err != nil {
		t.Fatalf("the fleet tests need RabbitMQ (make broker): %v", err)
	}
	t.Cleanup(broker.Close)
	mock := startMock(t, mockmodel.Config{Reply: "Hello from the fleet.",
		Usage: mockmodel.Usage{InputTokens: 1200, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000, OutputTokens: 77}})
	const exchange, queue = "ex.fleet-total", "q.fleet-total"
	events := broker.URL + "?exchange=" + exchange + "&queue=" + queue
	for _, m := range []struct{ machine, model string }{{"m1", "claude-sonnet-4-5"}, {"m2", unpricedModel}} {
		env := testharness.NewHarnessEnv(t, mock)
		env.Setenv("LIFELOOP_MACHINE", m.machine)
		res := env.Run(runTimeout, ll, "run", "--state-dir", stateDir(t), "--events", events, "--",
			testharness.ClaudeBin(t), "-p", "--model", m.model, "Say hello")
		if res.ExitCode != 0 {
			t.Fatalf("machine %s: lifeloop run: exit %d\nstdout: %s\nstderr: %s", m.machine, res.ExitCode, res.Stdout, res.Stderr)
		}
	}

	view := testharness.NewHarnessEnv(t, mock)
	view.Setenv("LIFELOOP_STATE_DIR", stateDir(t))
	top := func(args ...string) string {
		t.Helper()
		res := view.Run(runTimeout, ll, append([]string{"top", "--fleet", broker.URL + "?exchange=" + exchange, "--queue", queue, "--wait", "30s"}, args...)...)
		if res.ExitCode != 0 {
			t.Fatalf("top --fleet %v: exit %d\nstdout: %s\nstderr: %s", args, res.ExitCode, res.Stdout, res.Stderr)
		}
		return res.Stdout
	}
	var out struct {
		Sessions []struct {
			Machine string         `json:"machine"`
			Usage   map[string]any `json:"usage"`
		} `json:"sessions"`
		Totals struct {
			Sessions   int      `json:"sessions"`
			WithUsage  int      `json:"sessions_with_usage"`
			Unknown    int      `json:"unknown_cost_sessions"`
			Total      int64    `json:"total_tokens"`
			USD        *float64 `json:"cost_usd"`
			Provenance string   `json:"cost_provenance"`
		} `json:"totals"`
	}
	js := top("--json", "--totals")
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatalf("top --fleet --json --totals: %v\n%s", err, js)
	}
	tot := out.Totals
	usd := (1200*3 + 4000*0.3 + 300*3.75 + 77*15) / 1e6
	if len(out.Sessions) != 2 || tot.Sessions != 2 || tot.WithUsage != 2 || tot.Unknown != 1 || tot.Total != 2*(1200+4000+300+77) ||
		tot.USD == nil || math.Abs(*tot.USD-usd) > 1e-9 || tot.Provenance != "estimated+unknown" {
		t.Fatalf("fleet totals %+v, want 2 sessions with usage, 1 unpriced, %d tokens, $%g estimated+unknown\n%s", tot, 2*(1200+4000+300+77), usd, js)
	}

	table := top("--once")
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	last := strings.Join(strings.Fields(lines[len(lines)-1]), " ")
	if want := "TOTAL 2 sessions · 11.2k tokens · 1 unpriced $0.01+? estimated+unknown"; last != want {
		t.Fatalf("the table's last line %q, want %q\n%s", last, want, table)
	}
}

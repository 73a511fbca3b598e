package pi

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// TestRealPi runs the real Pi binary (offline, against the loopback mock
// model) and checks that discovery finds the session file it writes and
// that Watch turns it into the expected turn, usage and pressure: a tool
// turn whose replies report 150 300 tokens of the 200 000 window (75.15 %,
// high). Skipped when the binary is not installed.
func TestRealPi(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real harness binary")
	}
	mock, err := mockmodel.Start(mockmodel.Config{Usage: mockmodel.Usage{InputTokens: 150000, OutputTokens: 300}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: env.Env(), Cwd: env.Dir, LaunchedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r := telemetrytest.StartWatch(t, telemetry.WatchConfig{Discoverer: src.Discoverer, Within: 2 * time.Minute, NewParser: src.NewParser})
	if res := env.Run(0, bin, "-p", "RUN_TOOL please"); res.ExitCode != 0 {
		t.Fatalf("pi exited %d: %s", res.ExitCode, res.Stderr)
	}
	telemetrytest.CheckRealTurn(t, r, telemetrytest.RealTurn{Name: "pi", WantTokens: 150300, WantWindow: testharness.PiContextWindow, WantLevel: telemetry.LevelHigh})
}

package codex

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// TestRealHarnesses runs the real Codex binary (offline, against the
// loopback mock model) and checks that discovery finds the rollout it
// writes and that Watch turns it into the expected turn, usage and
// pressure observations. Skipped when the binary is not installed.
func TestRealHarnesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real harness binaries")
	}
	tests := []struct {
		name       string
		bin        func(testing.TB) string
		args       []string
		discoverer func(env *testharness.HarnessEnv, launch time.Time) telemetry.Discoverer
		parser     func() telemetry.Parser
		usage      mockmodel.Usage
		wantTokens int64
		// wantWindow is the window the usage observations must carry.
		wantWindow int64
		wantLevel  telemetry.Level
	}{
		{
			name: "codex",
			bin:  testharness.CodexBin,
			args: []string{"exec", "--skip-git-repo-check", "RUN_TOOL please"},
			discoverer: func(env *testharness.HarnessEnv, launch time.Time) telemetry.Discoverer {
				return &Discoverer{Home: env.CodexHome, Cwd: env.Dir, Launch: launch}
			},
			// Codex's total is input (cached tokens included) + output:
			// 200300 of the default 258400 effective window is 77.5 %: high.
			usage:      mockmodel.Usage{InputTokens: 200000, CacheReadInputTokens: 180000, OutputTokens: 300},
			wantTokens: 200300,
			parser:     func() telemetry.Parser { return NewParser() },
			wantWindow: 258400,
			wantLevel:  telemetry.LevelHigh,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := tc.bin(t)
			mock, err := mockmodel.Start(mockmodel.Config{Usage: tc.usage})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = mock.Close() })
			env := testharness.NewHarnessEnv(t, mock)
			launch := time.Now()
			r := telemetrytest.StartWatch(t, telemetry.WatchConfig{Discoverer: tc.discoverer(env, launch), Within: 2 * time.Minute, NewParser: tc.parser})
			res := env.Run(0, bin, tc.args...)
			if res.ExitCode != 0 {
				t.Fatalf("%s exited %d: %s", tc.name, res.ExitCode, res.Stderr)
			}
			telemetrytest.CheckRealTurn(t, r, telemetrytest.RealTurn{Name: tc.name, WantTokens: tc.wantTokens, WantWindow: tc.wantWindow, WantLevel: tc.wantLevel})
		})
	}
}

// TestRealCodexCompaction drives the real Codex into a mid-turn compaction
// (window 10000, auto-compact at 8000, 9300 tokens reported) and checks
// the pre/post tokens derived around the compacted record.
func TestRealCodexCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real harness binaries")
	}
	bin := testharness.CodexBin(t)
	big := mockmodel.Usage{InputTokens: 9000, CacheReadInputTokens: 8000, OutputTokens: 300}
	mock, err := mockmodel.Start(mockmodel.Config{Usage: mockmodel.DefaultUsage, UsageSequence: []mockmodel.Usage{big}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	env := testharness.NewHarnessEnv(t, mock)
	d := &Discoverer{Home: env.CodexHome, Cwd: env.Dir, Launch: time.Now()}
	r := telemetrytest.StartWatch(t, telemetry.WatchConfig{Discoverer: d, Within: 2 * time.Minute, NewParser: func() telemetry.Parser { return NewParser() }})
	res := env.Run(0, bin, "exec", "--skip-git-repo-check", "-c", "model_context_window=10000", "-c", "model_auto_compact_token_limit=8000", "RUN_TOOL please")
	if res.ExitCode != 0 {
		t.Fatalf("codex exited %d: %s", res.ExitCode, res.Stderr)
	}
	if p := r.Kind(telemetry.ObsPressure); p.Level != telemetry.LevelCritical || p.Tokens != 9300 {
		t.Errorf("pressure before compaction %s, want critical at 9300", telemetrytest.Summary(p))
	}
	c := r.Kind(telemetry.ObsCompacted)
	if c.PreTokens != 9300 || c.PostTokens <= 0 || c.PostTokens >= c.PreTokens || c.Window <= 0 {
		t.Errorf("compaction %s, want pre 9300 and a smaller post", telemetrytest.Summary(c))
	}
	if p := r.Kind(telemetry.ObsPressure); p.Detail != "compacted" || p.Tokens != c.PostTokens {
		t.Errorf("pressure after compaction %s (%s)", telemetrytest.Summary(p), p.Detail)
	}
	r.Kind(telemetry.ObsFrameEnded)
	t.Logf("codex compaction: %s", telemetrytest.Summary(c))
}

package claude_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// TestRealHarnesses runs the real Claude Code binary (offline, against the
// loopback mock model) and checks that discovery finds the transcript it
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
			name: "claude",
			bin:  testharness.ClaudeBin,
			args: []string{"-p", "RUN_TOOL please"},
			discoverer: func(env *testharness.HarnessEnv, launch time.Time) telemetry.Discoverer {
				return &claude.Discoverer{ConfigDir: filepath.Join(env.Home, ".claude"), Cwd: env.Dir, Launch: launch}
			},
			// input + cache creation + cache read + output = 190300 of a
			// 250000 window is 76 %: high.
			usage:      mockmodel.Usage{InputTokens: 3000, CacheCreationInputTokens: 7000, CacheReadInputTokens: 180000, OutputTokens: 300},
			wantTokens: 190300,
			parser:     func() telemetry.Parser { return claude.NewParser(claude.WindowConfig{MaxContextTokens: 250000}) },
			wantWindow: 250000,
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

// TestRealClaudeCompaction drives the real Claude Code into an automatic
// compaction (two turns near a 200k auto-compact window) and checks the
// compaction observation and the pressure reset it causes.
func TestRealClaudeCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real harness binaries")
	}
	bin := testharness.ClaudeBin(t)
	big := mockmodel.Usage{InputTokens: 3000, CacheCreationInputTokens: 7000, CacheReadInputTokens: 181000, OutputTokens: 300}
	mock, err := mockmodel.Start(mockmodel.Config{Usage: mockmodel.DefaultUsage, UsageSequence: []mockmodel.Usage{big, big}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000")
	d := &claude.Discoverer{ConfigDir: filepath.Join(env.Home, ".claude"), Cwd: env.Dir, Launch: time.Now()}
	r := telemetrytest.StartWatch(t, telemetry.WatchConfig{Discoverer: d, Within: 2 * time.Minute, NewParser: func() telemetry.Parser {
		return claude.NewParser(claude.WindowConfig{AutoCompactWindow: 200000})
	}})
	if res := env.Run(0, bin, "-p", "RUN_TOOL please"); res.ExitCode != 0 {
		t.Fatalf("first turn exited %d: %s", res.ExitCode, res.Stderr)
	}
	if p := r.Kind(telemetry.ObsPressure); p.Level != telemetry.LevelCritical {
		t.Errorf("pressure before compaction %s, want critical", telemetrytest.Summary(p))
	}
	if res := env.Run(0, bin, "-p", "--continue", "second prompt"); res.ExitCode != 0 {
		t.Fatalf("second turn exited %d: %s", res.ExitCode, res.Stderr)
	}
	c := r.Kind(telemetry.ObsCompacted)
	if c.Trigger != "auto" || c.PreTokens < 150000 || c.PostTokens <= 0 || c.PostTokens >= c.PreTokens {
		t.Errorf("compaction %s", telemetrytest.Summary(c))
	}
	if p := r.Kind(telemetry.ObsPressure); p.Detail != "compacted" || p.Level != telemetry.LevelLow || p.Previous != telemetry.LevelCritical {
		t.Errorf("pressure after compaction %s (%s)", telemetrytest.Summary(p), p.Detail)
	}
}

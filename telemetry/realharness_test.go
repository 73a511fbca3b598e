package telemetry

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRealHarnesses runs the real Claude Code and Codex binaries (offline,
// against the loopback mock model) and checks that discovery finds the
// file each writes and that Watch turns it into the expected turn, usage
// and pressure observations. Skipped when the binaries are not installed.
func TestRealHarnesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real harness binaries")
	}
	tests := []struct {
		name       string
		bin        func(testing.TB) string
		args       []string
		discoverer func(env *testharness.HarnessEnv, launch time.Time) Discoverer
		parser     func() Parser
		usage      mockmodel.Usage
		wantTokens int64
		// wantWindow is the window the usage observations must carry.
		wantWindow int64
		wantLevel  Level
	}{
		{
			name: "claude",
			bin:  testharness.ClaudeBin,
			args: []string{"-p", "RUN_TOOL please"},
			discoverer: func(env *testharness.HarnessEnv, launch time.Time) Discoverer {
				return &ClaudeDiscoverer{ConfigDir: filepath.Join(env.Home, ".claude"), Cwd: env.Dir, Launch: launch}
			},
			// input + cache creation + cache read + output = 190300 of a
			// 250000 window is 76 %: high.
			usage:      mockmodel.Usage{InputTokens: 3000, CacheCreationInputTokens: 7000, CacheReadInputTokens: 180000, OutputTokens: 300},
			wantTokens: 190300,
			parser:     func() Parser { return NewClaudeParser(ClaudeConfig{MaxContextTokens: 250000}) },
			wantWindow: 250000,
			wantLevel:  LevelHigh,
		},
		{
			name: "codex",
			bin:  testharness.CodexBin,
			args: []string{"exec", "--skip-git-repo-check", "RUN_TOOL please"},
			discoverer: func(env *testharness.HarnessEnv, launch time.Time) Discoverer {
				return &CodexDiscoverer{Home: env.CodexHome, Cwd: env.Dir, Launch: launch}
			},
			// Codex's total is input (cached tokens included) + output:
			// 200300 of the default 258400 effective window is 77.5 %: high.
			usage:      mockmodel.Usage{InputTokens: 200000, CacheReadInputTokens: 180000, OutputTokens: 300},
			wantTokens: 200300,
			parser:     func() Parser { return NewCodexParser() },
			wantWindow: 258400,
			wantLevel:  LevelHigh,
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
			r := startWatch(t, WatchConfig{Discoverer: tc.discoverer(env, launch), Within: 2 * time.Minute, NewParser: tc.parser})
			res := env.Run(0, bin, tc.args...)
			if res.ExitCode != 0 {
				t.Fatalf("%s exited %d: %s", tc.name, res.ExitCode, res.Stderr)
			}
			found := r.kind(ObsSourceFound)
			sess := r.kind(ObsHarnessSession)
			if sess.HarnessSessionID == "" {
				t.Error("no harness session id")
			}
			opening := r.kind(ObsFrameOpening)
			r.kind(ObsFrameOpened)
			u := r.kind(ObsUsage)
			if u.Tokens != tc.wantTokens || u.Window != tc.wantWindow || u.FrameID != opening.FrameID {
				t.Errorf("usage %s, want %d of %d in frame %s", summary(u), tc.wantTokens, tc.wantWindow, opening.FrameID)
			}
			if p := r.kind(ObsPressure); p.Level != tc.wantLevel {
				t.Errorf("pressure %s, want %s", summary(p), tc.wantLevel)
			}
			end := r.kind(ObsFrameEnded)
			if end.FrameID != opening.FrameID {
				t.Errorf("frame ended %s, opened %s", end.FrameID, opening.FrameID)
			}
			if end.Source.Path != found.Source.Path || end.Source.Line == 0 {
				t.Errorf("provenance %+v (file %s)", end.Source, found.Source.Path)
			}
			t.Logf("%s: %s session %s, turn %s ended (%s) at line %d", tc.name, filepath.Base(found.Source.Path), sess.HarnessSessionID, end.FrameID, end.Trigger, end.Source.Line)
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
	d := &ClaudeDiscoverer{ConfigDir: filepath.Join(env.Home, ".claude"), Cwd: env.Dir, Launch: time.Now()}
	r := startWatch(t, WatchConfig{Discoverer: d, Within: 2 * time.Minute, NewParser: func() Parser {
		return NewClaudeParser(ClaudeConfig{AutoCompactWindow: 200000})
	}})
	if res := env.Run(0, bin, "-p", "RUN_TOOL please"); res.ExitCode != 0 {
		t.Fatalf("first turn exited %d: %s", res.ExitCode, res.Stderr)
	}
	if p := r.kind(ObsPressure); p.Level != LevelCritical {
		t.Errorf("pressure before compaction %s, want critical", summary(p))
	}
	if res := env.Run(0, bin, "-p", "--continue", "second prompt"); res.ExitCode != 0 {
		t.Fatalf("second turn exited %d: %s", res.ExitCode, res.Stderr)
	}
	c := r.kind(ObsCompacted)
	if c.Trigger != "auto" || c.PreTokens < 150000 || c.PostTokens <= 0 || c.PostTokens >= c.PreTokens {
		t.Errorf("compaction %s", summary(c))
	}
	if p := r.kind(ObsPressure); p.Detail != "compacted" || p.Level != LevelLow || p.Previous != LevelCritical {
		t.Errorf("pressure after compaction %s (%s)", summary(p), p.Detail)
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
	d := &CodexDiscoverer{Home: env.CodexHome, Cwd: env.Dir, Launch: time.Now()}
	r := startWatch(t, WatchConfig{Discoverer: d, Within: 2 * time.Minute, NewParser: func() Parser { return NewCodexParser() }})
	res := env.Run(0, bin, "exec", "--skip-git-repo-check", "-c", "model_context_window=10000", "-c", "model_auto_compact_token_limit=8000", "RUN_TOOL please")
	if res.ExitCode != 0 {
		t.Fatalf("codex exited %d: %s", res.ExitCode, res.Stderr)
	}
	if p := r.kind(ObsPressure); p.Level != LevelCritical || p.Tokens != 9300 {
		t.Errorf("pressure before compaction %s, want critical at 9300", summary(p))
	}
	c := r.kind(ObsCompacted)
	if c.PreTokens != 9300 || c.PostTokens <= 0 || c.PostTokens >= c.PreTokens || c.Window <= 0 {
		t.Errorf("compaction %s, want pre 9300 and a smaller post", summary(c))
	}
	if p := r.kind(ObsPressure); p.Detail != "compacted" || p.Tokens != c.PostTokens {
		t.Errorf("pressure after compaction %s (%s)", summary(p), p.Detail)
	}
	r.kind(ObsFrameEnded)
	t.Logf("codex compaction: %s", summary(c))
}

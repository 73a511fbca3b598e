package claude_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/telemetry"
)

// TestWatchConfigFromHarnessEnv: where TelemetrySource looks for the
// transcripts and the window it measures against, from the harness's
// environment (the claude rows of observe's Config test).
func TestWatchConfigFromHarnessEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		root    string // the discoverer's folder
		window  claude.WindowConfig
		wantErr string
	}{
		{"claude home", []string{"HOME=/h"}, "/h/.claude", claude.WindowConfig{}, ""},
		{"claude config dir wins", []string{"HOME=/h", "CLAUDE_CONFIG_DIR=/c"}, "/c", claude.WindowConfig{}, ""},
		{"claude window overrides", []string{"HOME=/h", "CLAUDE_CODE_AUTO_COMPACT_WINDOW=5000", "CLAUDE_CODE_MAX_CONTEXT_TOKENS=9000", "CLAUDE_CODE_MAX_CONTEXT_TOKENS=8000"}, "/h/.claude", claude.WindowConfig{AutoCompactWindow: 5000, MaxContextTokens: 8000}, ""},
		{"claude bad window ignored", []string{"HOME=/h", "CLAUDE_CODE_MAX_CONTEXT_TOKENS=lots"}, "/h/.claude", claude.WindowConfig{}, ""},
		{"no home", nil, "", claude.WindowConfig{}, "HOME"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := claude.Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: tc.env, Cwd: "/p"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, ok := src.Discoverer.(*claude.Discoverer)
			if !ok {
				t.Fatalf("discoverer %T", src.Discoverer)
			}
			if d.ConfigDir != tc.root {
				t.Errorf("config dir %s, want %s", d.ConfigDir, tc.root)
			}
			if got := claude.ParserWindow(src.NewParser()); got != tc.window {
				t.Errorf("window %+v, want %+v", got, tc.window)
			}
		})
	}
}

// TestTelemetrySource: the launch's folder, start and session id reach
// the discoverer, and the error without a home says exactly why.
func TestTelemetrySource(t *testing.T) {
	at := time.Unix(1700000000, 0)
	src, err := claude.Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=/h"}, Cwd: "/p", LaunchedAt: at, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != telemetry.SourceTranscript || src.NewParser().SourceKind() != telemetry.SourceTranscript || src.Discoverer.SourceKind() != telemetry.SourceTranscript {
		t.Errorf("source kinds %q", src.Kind)
	}
	if d := src.Discoverer.(*claude.Discoverer); d.Cwd != "/p" || !d.Launch.Equal(at) || d.SessionID != "s1" {
		t.Errorf("discoverer %+v", d)
	}
	if roots := src.Discoverer.Roots(); len(roots) != 1 || roots[0] != "/h/.claude/projects/-p" {
		t.Errorf("roots %q", roots)
	}
	_, err = claude.Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"CLAUDE_CODE_MAX_CONTEXT_TOKENS=1"}})
	const want = "telemetry: neither CLAUDE_CONFIG_DIR nor HOME is set in the harness environment; cannot find Claude's transcripts"
	if err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
}

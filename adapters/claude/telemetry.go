package claude

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
)

// Claude Code's environment variables lifeloop reads from the harness's
// environment.
const (
	configDirVar         = "CLAUDE_CONFIG_DIR"
	autoCompactWindowVar = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
	maxContextTokensVar  = "CLAUDE_CODE_MAX_CONTEXT_TOKENS"
)

// TelemetrySource implements adapters.Telemetry: the transcript under
// $CLAUDE_CONFIG_DIR (else $HOME/.claude)/projects/<cwd>/ (or the folder
// CLAUDE_CODE_PROJECT_DIR_NAME names), measured against
// the window the harness's environment sets.
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	dir := adapters.EnvValue(t.Env, configDirVar)
	if dir == "" {
		home := adapters.EnvValue(t.Env, "HOME")
		if home == "" {
			return adapters.TelemetrySource{}, errors.New("telemetry: neither CLAUDE_CONFIG_DIR nor HOME is set in the harness environment; cannot find Claude's transcripts")
		}
		dir = filepath.Join(home, ".claude")
	}
	cfg := windowConfigOf(t.Env)
	return adapters.TelemetrySource{
		Kind:       telemetry.SourceTranscript,
		Discoverer: &discoverer{ConfigDir: dir, ProjectName: ProjectNameFromEnv(t.Env), Cwd: t.Cwd, Launch: t.LaunchedAt, SessionID: t.SessionID},
		NewParser:  func() telemetry.Parser { return newParser(cfg) },
	}, nil
}

// windowConfigOf reads Claude's window overrides from the harness's
// environment; a value that is not a non-negative integer counts as unset.
func windowConfigOf(env []string) windowConfig {
	num := func(k string) int64 {
		n, err := strconv.ParseInt(strings.TrimSpace(adapters.EnvValue(env, k)), 10, 64)
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
	return windowConfig{
		AutoCompactWindow: num(autoCompactWindowVar),
		MaxContextTokens:  num(maxContextTokensVar),
	}
}

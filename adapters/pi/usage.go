package pi

import (
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// UsageFiles implements adapters.UsageReader: every *.jsonl under
// $PI_CODING_AGENT_SESSION_DIR, else <agent dir>/sessions ($PI_CODING_AGENT_DIR,
// else ~/.pi/agent).
func (Harness) UsageFiles(getenv func(string) string) ([]string, error) {
	root := getenv(sessionDirVar)
	if root == "" {
		agent := getenv(agentDirVar)
		if agent == "" && getenv("HOME") != "" {
			agent = filepath.Join(getenv("HOME"), ".pi", "agent")
		}
		if agent == "" {
			return nil, nil
		}
		root = filepath.Join(agent, "sessions")
	}
	return kit.FindFiles(root, func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
}

// NewUsageParser implements adapters.UsageReader with the usage parser
// of session entries (kit.NewEntryUsageParser): Pi's cost is native, Pi
// prices each call from its model configuration. Session and Project are
// the header's id and cwd, kept in state across reads of a file.
func (Harness) NewUsageParser(_ string, state []byte) adapters.UsageParser {
	return kit.NewEntryUsageParser(telemetry.SourceTranscript, state)
}

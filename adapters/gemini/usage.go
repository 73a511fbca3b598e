package gemini

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// UsageFiles implements adapters.UsageReader: every chats/session-*.jsonl
// under tmp/ of $GEMINI_CLI_HOME/.gemini, else ~/.gemini.
func (Harness) UsageFiles(getenv func(string) string) ([]string, error) {
	home := homeDir(getenv)
	if home == "" {
		return nil, nil
	}
	root := filepath.Join(home, "tmp")
	return kit.FindFiles(root, func(p string) bool {
		name := filepath.Base(p)
		return strings.HasPrefix(name, "session-") && strings.HasSuffix(name, ".jsonl") && filepath.Base(filepath.Dir(p)) == "chats"
	})
}

// NewUsageParser implements adapters.UsageReader. The chat file's own
// parser reads each line; each "gemini" record it reports usage of is a
// model call: Input tokens.input less tokens.cached, plus tokens.tool
// (the tool-use prompt), CacheRead tokens.cached, Output tokens.output
// plus tokens.thoughts, Reasoning tokens.thoughts (billed as output), so
// the tokens add up to tokens.total. Key is the session and the record's
// id: the CLI appends a record again when it changes it, and the first
// usage of a record is the one counted. Project is the folder under tmp/
// (the CLI's name for the working folder).
func (Harness) NewUsageParser(path string, state []byte) adapters.UsageParser {
	u := &usageParser{p: NewParser(0), project: filepath.Base(filepath.Dir(filepath.Dir(path)))}
	var s usageState
	if json.Unmarshal(state, &s) == nil {
		u.p.sessionID, u.p.model, u.p.turn, u.p.opened, u.p.ended = s.Session, s.Model, s.Turn, s.Opened, s.Ended
	}
	return u
}

type usageState struct {
	Session, Model, Turn string
	Opened, Ended        bool
}

type usageParser struct {
	p       *Parser
	project string
	obs     []telemetry.Observation
}

func (u *usageParser) State() []byte {
	b, _ := json.Marshal(usageState{u.p.sessionID, u.p.model, u.p.turn, u.p.opened, u.p.ended})
	return b
}

func (u *usageParser) Parse(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
	obs, err := u.p.Parse(u.obs[:0], line, telemetry.Provenance{})
	u.obs = obs
	if err != nil {
		return dst, err
	}
	for _, o := range obs {
		if o.Kind != telemetry.ObsUsage {
			continue
		}
		var l struct {
			ID     string `json:"id"`
			Tokens struct {
				Input, Output, Cached, Thoughts, Tool int64
			} `json:"tokens"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return dst, err
		}
		t := l.Tokens
		e := adapters.UsageEntry{
			At: o.At, SessionID: o.HarnessSessionID, Project: u.project, Model: o.Model, FrameID: o.FrameID,
			Tokens: adapters.UsageTokens{Input: max(t.Input-t.Cached, 0) + t.Tool, CacheRead: t.Cached, Output: t.Output + t.Thoughts, Reasoning: t.Thoughts},
		}
		if l.ID != "" {
			e.Key = o.HarnessSessionID + ":" + l.ID
		}
		dst = append(dst, e)
	}
	return dst, nil
}

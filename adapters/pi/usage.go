package pi

import (
	"encoding/json"
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

// NewUsageParser implements adapters.UsageReader. The session-entry
// parser (kit.NewEntryParser) reads each line; each assistant message it
// reports usage of is a model call: Input usage.input, CacheRead
// usage.cacheRead, CacheWrite usage.cacheWrite, Output usage.output (Pi
// reports no reasoning apart), Model and Provider the message's. Its
// cost is native: Pi prices each call from its model configuration and
// records usage.cost.total — unless that is 0 for a call with tokens (a
// model Pi has no price for), then it is left to the price table. Key is
// the entry's id and timestamp, which a forked session's file copies.
// Session and Project are the header's id and cwd.
func (Harness) NewUsageParser(_ string, state []byte) adapters.UsageParser {
	u := &usageParser{p: kit.NewEntryParser(telemetry.SourceTranscript, nil, "")}
	_ = json.Unmarshal(state, &u.s)
	return u
}

type usageState struct {
	Session, Cwd string
}

type usageParser struct {
	p   telemetry.Parser
	s   usageState
	obs []telemetry.Observation
}

func (u *usageParser) State() []byte {
	b, _ := json.Marshal(u.s)
	return b
}

// usageLine is what a usage parser reads of an assistant message.
type usageLine struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Message   struct {
		Provider string `json:"provider"`
		Model    string `json:"model"`
		Usage    struct {
			Input      int64 `json:"input"`
			Output     int64 `json:"output"`
			CacheRead  int64 `json:"cacheRead"`
			CacheWrite int64 `json:"cacheWrite"`
			Cost       *struct {
				Total float64 `json:"total"`
			} `json:"cost"`
		} `json:"usage"`
	} `json:"message"`
}

func (u *usageParser) Parse(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
	obs, err := u.p.Parse(u.obs[:0], line, telemetry.Provenance{})
	u.obs = obs
	if err != nil {
		return dst, err
	}
	for _, o := range obs {
		switch o.Kind {
		case telemetry.ObsHarnessSession:
			u.s.Session, u.s.Cwd = o.HarnessSessionID, o.Cwd
		case telemetry.ObsUsage:
			var l usageLine
			if err := json.Unmarshal(line, &l); err != nil {
				return dst, err
			}
			m := l.Message
			e := adapters.UsageEntry{
				At: o.At, SessionID: u.s.Session, Project: u.s.Cwd, Model: m.Model, Provider: m.Provider,
				FrameID: o.FrameID,
				Tokens:  adapters.UsageTokens{Input: m.Usage.Input, CacheRead: m.Usage.CacheRead, CacheWrite: m.Usage.CacheWrite, Output: m.Usage.Output},
			}
			if l.ID != "" {
				e.Key = l.ID + "@" + l.Timestamp
			}
			if c := m.Usage.Cost; c != nil && (c.Total > 0 || e.Tokens.Total() == 0) {
				e.Cost, e.HasCost = c.Total, true
			}
			dst = append(dst, e)
		}
	}
	return dst, nil
}

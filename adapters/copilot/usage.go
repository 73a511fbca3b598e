package copilot

import (
	"encoding/json"
	"path/filepath"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

var _ adapters.UsageReader = Harness{}

// UsageFiles implements adapters.UsageReader: every
// session-state/<id>/events.jsonl under $COPILOT_HOME, else ~/.copilot.
func (Harness) UsageFiles(getenv func(string) string) ([]string, error) {
	home := homeDir(getenv)
	if home == "" {
		return nil, nil
	}
	root := stateDir(home)
	return kit.FindFiles(root, func(p string) bool {
		return filepath.Base(p) == eventsFile && filepath.Dir(filepath.Dir(p)) == root
	})
}

// NewUsageParser implements adapters.UsageReader. The session file's
// parser (Parser) reads each line; each session.usage_record (one per
// model call, measured with 1.0.102) is a call: CacheRead
// usage.cacheReadTokens, CacheWrite usage.cacheWriteTokens, Input
// usage.inputTokens less both (Copilot counts the cached tokens in it:
// 1200 input, 4000 cache read and 300 cache write tokens on the
// Anthropic wire were recorded as inputTokens 5500, TestUsageEverywhere),
// Output usage.outputTokens (Copilot records no reasoning apart); Model usage.model, Provider usage.providerType.
// usage.cost is Copilot's own request cost (0.0 with a custom provider),
// not a price in US dollars, so the cost is left to the price table. Key is usage.apiCallId (the provider's
// message id), else the record's id. Session and Project are the
// session's id and recorded folder. A subagent's records (agentId) are
// skipped, as Parser skips them (not measured: the mock starts none).
func (Harness) NewUsageParser(path string, state []byte) adapters.UsageParser {
	u := &usageParser{p: NewParser(), path: path}
	if json.Unmarshal(state, &u.s) == nil {
		u.p.sessionID, u.p.frame = u.s.Session, u.s.Frame
	}
	return u
}

// usageState is what a usage parser resumes from.
type usageState struct {
	Session, Cwd, Frame string
}

type usageParser struct {
	p    *Parser
	path string
	s    usageState
	obs  []telemetry.Observation
}

func (u *usageParser) State() []byte {
	u.s.Session, u.s.Frame = u.p.sessionID, u.p.frame
	b, _ := json.Marshal(u.s)
	return b
}

// usageRecord is what a usage parser reads of a session.usage_record.
type usageRecord struct {
	ID   string `json:"id"`
	Data struct {
		Usage struct {
			Model            string `json:"model"`
			InputTokens      int64  `json:"inputTokens"`
			OutputTokens     int64  `json:"outputTokens"`
			CacheReadTokens  int64  `json:"cacheReadTokens"`
			CacheWriteTokens int64  `json:"cacheWriteTokens"`
			ProviderType     string `json:"providerType"`
			APICallID        string `json:"apiCallId"`
		} `json:"usage"`
	} `json:"data"`
}

func (u *usageParser) Parse(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
	obs, err := u.p.Parse(u.obs[:0], line, telemetry.Provenance{Path: u.path})
	u.obs = obs
	if err != nil {
		return dst, err
	}
	for _, o := range obs {
		switch o.Kind {
		case telemetry.ObsHarnessSession:
			if o.Cwd != "" {
				u.s.Cwd = o.Cwd
			}
		case telemetry.ObsUsage:
			var r usageRecord
			if err := json.Unmarshal(line, &r); err != nil {
				return dst, err
			}
			us := r.Data.Usage
			e := adapters.UsageEntry{
				At: o.At, SessionID: o.HarnessSessionID, Project: u.s.Cwd, Model: us.Model, Provider: us.ProviderType,
				FrameID: o.FrameID, Key: us.APICallID,
				Tokens: adapters.UsageTokens{Input: max(0, us.InputTokens-us.CacheReadTokens-us.CacheWriteTokens), CacheRead: us.CacheReadTokens, CacheWrite: us.CacheWriteTokens, Output: us.OutputTokens},
			}
			if e.Key == "" {
				e.Key = r.ID
			}
			dst = append(dst, e)
		}
	}
	return dst, nil
}

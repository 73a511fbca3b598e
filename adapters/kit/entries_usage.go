package kit

import (
	"encoding/json"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
)

// NewEntryUsageParser returns the usage parser of session entries (a
// line each, read by the session-entry parser, NewEntryParser): each
// assistant message with usage is a model call, Input usage.input,
// CacheRead usage.cacheRead, CacheWrite usage.cacheWrite, Output
// usage.output (the format records no reasoning apart), Model and
// Provider the message's. Its cost is native — the harness prices each
// call from its model configuration and records usage.cost.total — unless
// that is 0 for a call with tokens (a model with no price), then it is
// left to the price table. Key is the entry's id and timestamp (which a
// forked session copies). Session and Project are the header's id and
// cwd; State keeps them, and state (a State of an earlier parser, or
// nil) restores them.
func NewEntryUsageParser(kind telemetry.SourceKind, state []byte) adapters.UsageParser {
	u := &entryUsageParser{p: NewEntryParser(kind, nil, "")}
	_ = json.Unmarshal(state, &u.s)
	return u
}

type entryUsageState struct {
	Session, Cwd string
}

type entryUsageParser struct {
	p   telemetry.Parser
	s   entryUsageState
	obs []telemetry.Observation
}

func (u *entryUsageParser) State() []byte {
	b, _ := json.Marshal(u.s)
	return b
}

// entryUsageLine is what the usage parser reads of an assistant message.
type entryUsageLine struct {
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

func (u *entryUsageParser) Parse(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
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
			var l entryUsageLine
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

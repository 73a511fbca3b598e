package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// UsageFiles implements adapters.UsageReader: every rollout-*.jsonl under
// $CODEX_HOME (else ~/.codex)/sessions.
func (Harness) UsageFiles(getenv func(string) string) ([]string, error) {
	home := homeDir(getenv)
	if home == "" {
		return nil, nil
	}
	root := filepath.Join(home, "sessions")
	return kit.FindFiles(root, func(p string) bool {
		name := filepath.Base(p)
		return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl")
	})
}

// NewUsageParser implements adapters.UsageReader. The rollout's own
// parser reads each line; each token_count it reports as usage (a
// token_count the harness repeats verbatim is not) is a model call, its
// tokens info.last_token_usage's — or, where a token_count has none, the
// growth of info.total_token_usage since the previous one. Input is
// input_tokens less cached_input_tokens and cache_write_input_tokens
// (which Codex counts inside input_tokens), CacheRead
// cached_input_tokens, CacheWrite cache_write_input_tokens, Output
// output_tokens, Reasoning reasoning_output_tokens (part of Output, as
// the model's API counts it). Model is the latest turn_context's,
// Provider session_meta's model_provider, Project session_meta's cwd.
// No Key: a rollout's calls are its own. The usage objects and the
// provider are read in one pass where it is sure of what encoding/json
// would read (usagescan.go), else with encoding/json.
//
// Most of a rollout's bytes are lines that move no usage (the messages,
// tool calls and outputs of response_item lines, the events of a turn):
// a line is passed over unparsed when every "type":" key it holds names
// a kind the reading ignores (passOver), as Claude Code's reader passes
// over lines without tokens; such a line is unreadable only when it
// does not begin with { and end with }.
func (Harness) NewUsageParser(_ string, state []byte) adapters.UsageParser {
	u := &usageParser{p: NewParser()}
	var s usageState
	if len(state) > 0 && json.Unmarshal(state, &s) == nil {
		u.s = s
		u.p.sessionID, u.p.version, u.p.model, u.p.turn, u.p.window = s.Session, s.Version, s.Model, s.Turn, s.Window
		u.p.lastTotal, u.p.lastCum, u.p.haveCount = s.LastTotal, s.LastCum, s.HaveCount
	}
	return u
}

// usageState is what a usage parser resumes from.
type usageState struct {
	Session, Version, Model, Turn, Cwd, Provider string
	Window, LastTotal, LastCum                   int64
	HaveCount                                    bool
	Cum                                          tokenUsage // the latest total_token_usage
}

// usageParser passes over lines by their bytes.
var _ adapters.UsageLineFilter = (*usageParser)(nil)

type usageParser struct {
	p   *Parser
	s   usageState
	obs []telemetry.Observation
	tc  tokenCount
	js  telemetry.JSONScan
	// decodeOnly reads token counts and providers with encoding/json
	// alone: the reference the one-pass reading is tested against.
	decodeOnly bool
	// wholeLines parses every line, none passed over: the reference
	// passOver is tested against.
	wholeLines bool
}

var errNotAnObject = errors.New("not a JSON object")

// typeTail ends `"type":"`, which begins every key named type with a
// string value as Codex writes its lines (compact). Inside a JSON string
// a quote is escaped, so these bytes, unless a backslash escapes their
// first quote, are a key of the line and never text within a value.
var typeTail = []byte(`ype":"`)

// passOver reports whether a line can move nothing `lifeloop usage`
// reads: it holds at least one type key and each one's value is plain
// and names a kind the rollout's parser records nothing for that usage
// needs (usageKind). A line whose kinds are written otherwise (spaces
// around the colon, escapes, a key in another case: Codex writes none of
// these) is parsed whole if it holds no plain type key; one that holds
// both is passed over on the plain ones.
func passOver(line []byte) bool {
	found := false
	// The search is for the key's rarer tail: a quote, its first byte,
	// is in most of a line's values.
	for i := 0; ; {
		j := bytes.Index(line[i:], typeTail)
		if j < 0 {
			return found
		}
		j += i
		v := j + len(typeTail)
		if j < 2 || line[j-2] != '"' || line[j-1] != 't' {
			i = v
			continue
		}
		escaped := false
		for k := j - 3; k >= 0 && line[k] == '\\'; k-- {
			escaped = !escaped
		}
		if !escaped {
			n := bytes.IndexByte(line[v:], '"')
			if n < 0 {
				return false
			}
			kind := line[v : v+n]
			if usageKind(kind) || bytes.IndexByte(kind, '\\') >= 0 {
				return false
			}
			found = true
			v += n + 1
		}
		i = v
	}
}

// usageKind reports whether a line of this kind (its type, or its
// event_msg payload's) can change what the usage reading reports: a
// session's identity, the model, a call's tokens, or whether a repeated
// token_count is a call (a pending compaction, and the turn events that
// flush it).
func usageKind(kind []byte) bool {
	switch string(kind) {
	case "session_meta", "turn_context", "compacted",
		"token_count", "task_started", "task_complete", "turn_aborted":
		return true
	}
	return false
}

// scan is the scanner for the one-pass reading, nil for decodeOnly.
func (u *usageParser) scan() *telemetry.JSONScan {
	if u.decodeOnly {
		return nil
	}
	return &u.js
}

// tokenUsage is a token_count's usage object.
type tokenUsage struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Reasoning  int64 `json:"reasoning_output_tokens"`
}

func (t tokenUsage) less(o tokenUsage) tokenUsage {
	return tokenUsage{t.Input - o.Input, t.Cached - o.Cached, t.CacheWrite - o.CacheWrite, t.Output - o.Output, t.Reasoning - o.Reasoning}
}

func (u *usageParser) State() []byte {
	s := u.s
	s.Session, s.Version, s.Model, s.Turn, s.Window = u.p.sessionID, u.p.version, u.p.model, u.p.turn, u.p.window
	s.LastTotal, s.LastCum, s.HaveCount = u.p.lastTotal, u.p.lastCum, u.p.haveCount
	b, _ := json.Marshal(s)
	return b
}

func (u *usageParser) Parse(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
	if kept, err := u.Kept(line); !kept {
		return dst, err
	}
	return u.ParseKept(dst, line)
}

// Kept implements adapters.UsageLineFilter: a line passOver does not pass
// over is kept.
func (u *usageParser) Kept(line []byte) (bool, error) {
	if u.wholeLines || !passOver(line) {
		return true, nil
	}
	if t := bytes.TrimSpace(line); len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return false, errNotAnObject
	}
	return false, nil
}

// ParseKept implements adapters.UsageLineFilter.
func (u *usageParser) ParseKept(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
	obs, err := u.p.Parse(u.obs[:0], line, telemetry.Provenance{})
	u.obs = obs
	if err != nil {
		return dst, err
	}
	for _, o := range obs {
		switch o.Kind {
		case telemetry.ObsHarnessSession:
			u.s.Cwd = o.Cwd
			if p, ok := readProvider(u.scan(), line); ok {
				u.s.Provider = p
			}
		case telemetry.ObsUsage:
			if l := &u.p.l; l.onePass && !u.decodeOnly {
				// The rollout's parser read the usage objects in its pass.
				u.tc = tokenCount{total: l.totalUse, last: l.lastUse, hasTotal: l.hasTotalUse, hasLast: l.hasLastUse}
			} else if err := readTokenCount(line, &u.tc); err != nil {
				return dst, err
			}
			var t tokenUsage
			switch tc := &u.tc; {
			case tc.hasLast:
				t = tc.last
			case tc.hasTotal:
				t = tc.total.less(u.s.Cum)
			}
			if u.tc.hasTotal {
				u.s.Cum = u.tc.total
			}
			in := t.Input - t.Cached - t.CacheWrite
			if in < 0 {
				in = 0
			}
			dst = append(dst, adapters.UsageEntry{
				At: o.At, SessionID: o.HarnessSessionID, Project: u.s.Cwd,
				Model: o.Model, Provider: u.s.Provider, FrameID: o.FrameID,
				Tokens: adapters.UsageTokens{Input: in, CacheRead: t.Cached, CacheWrite: t.CacheWrite, Output: t.Output, Reasoning: t.Reasoning},
			})
		}
	}
	return dst, nil
}

package copilot

import (
	"encoding/json"
	"path/filepath"

	"github.com/lifeloop/lifeloop/telemetry"
)

// Parser reads Copilot CLI session files (events.jsonl, append-only,
// measured with 1.0.102): one {type, data, id, timestamp, parentId}
// record per line, plus agentId on a subagent's records. Types it does
// not read (hook.start, tool.*, system.message, model.*, …) are skipped.
//
// Rules:
//   - session.start's data.sessionId (else, for a file followed from a
//     session.resume on, the session folder's name): ObsHarnessSession
//     when first seen, with copilotVersion and the recorded cwd.
//   - user.message (not a subagent's) opens a turn: ObsFrameOpening,
//     FrameID = "<session id>#<interactionId>" (FrameID), unique across
//     resumes of the session. A prompt while a turn is open ends it first
//     (Trigger "interrupted").
//   - The turn's first assistant.turn_start: ObsFrameOpened.
//   - session.usage_record (one per model call): ObsUsage, Tokens = the
//     call's prompt (inputTokens, which counts the cached tokens too:
//     the mock's 1200 input, 4000 cache read and 300 cache write tokens
//     on the Anthropic wire were recorded as inputTokens 5500,
//     TestUsageEverywhere),
//     Window = maxPromptTokens (the model's prompt limit, which Copilot
//     compacts against: in the background at 0.80 of it, blocking at
//     0.95). A record without usage.inputTokens is ObsUnreadable.
//   - assistant.turn_end after an assistant.message with no toolRequests
//     ends the turn: ObsFrameEnded, Trigger "stop"; abort ends it with
//     "aborted", session.shutdown with "shutdown".
//   - session.compaction_complete with success: ObsCompacted, Trigger
//     "auto" (threshold) or "manual" (/compact), PreTokens and PostTokens
//     the runtime's estimate before and after, ID the compactionAttemptId.
type Parser struct {
	sessionID string
	version   string
	model     string
	frame     string
	opened    bool
	answered  bool // the turn's last assistant.message asked for no tool
	window    int64
}

// NewParser returns a parser for one session file.
func NewParser() *Parser { return &Parser{} }

// SourceKind implements telemetry.Parser.
func (p *Parser) SourceKind() telemetry.SourceKind { return SourceEvents }

// FrameID is the frame id of the turn a prompt with interactionId
// opened in session sessionID: "<sessionID>#<interactionId>".
func FrameID(sessionID, interactionID string) string { return sessionID + "#" + interactionID }

// record is the part of an events.jsonl line the parser reads.
type record struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	AgentID   string          `json:"agentId"`
	Data      json.RawMessage `json:"data"`
}

type recordData struct {
	SessionID      string `json:"sessionId"`
	CopilotVersion string `json:"copilotVersion"`
	SelectedModel  string `json:"selectedModel"`
	Context        struct {
		Cwd string `json:"cwd"`
	} `json:"context"`
	InteractionID string            `json:"interactionId"`
	Model         string            `json:"model"`
	ToolRequests  []json.RawMessage `json:"toolRequests"`
	Usage         *struct {
		Model            string `json:"model"`
		InputTokens      *int64 `json:"inputTokens"`
		CacheReadTokens  int64  `json:"cacheReadTokens"`
		CacheWriteTokens int64  `json:"cacheWriteTokens"`
		MaxPromptTokens  int64  `json:"maxPromptTokens"`
	} `json:"usage"`
	Success              *bool  `json:"success"`
	Trigger              string `json:"trigger"`
	PreCompactionTokens  int64  `json:"preCompactionTokens"`
	PostCompactionTokens int64  `json:"postCompactionTokens"`
	CompactionAttemptID  string `json:"compactionAttemptId"`
	TokenLimit           int64  `json:"tokenLimit"`
}

// Parse implements telemetry.Parser.
func (p *Parser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return dst, err
	}
	if r.Type == "" {
		return dst, telemetry.ErrNotObject
	}
	if r.AgentID != "" || !read[r.Type] {
		return dst, nil
	}
	var d recordData
	if len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return dst, err
		}
	}
	base := telemetry.Observation{Source: src, At: telemetry.ParseTime(r.Timestamp)}
	if p.sessionID == "" && r.Type != "session.start" && src.Path != "" {
		// A file followed from its end on (a resumed session): the
		// session folder is named by its id.
		dst = p.session(dst, base, filepath.Base(filepath.Dir(src.Path)), "")
	}
	switch r.Type {
	case "session.start":
		p.version = d.CopilotVersion
		p.model = d.SelectedModel
		dst = p.session(dst, base, d.SessionID, d.Context.Cwd)
	case "session.resume":
		if d.SelectedModel != "" {
			p.model = d.SelectedModel
		}
	case "user.message":
		if p.frame != "" {
			dst = p.end(dst, base, "interrupted")
		}
		p.frame, p.opened, p.answered = FrameID(p.sessionID, d.InteractionID), false, false
		o := base
		o.Kind = telemetry.ObsFrameOpening
		dst = append(dst, p.stamp(o))
	case "assistant.turn_start":
		if p.frame != "" && !p.opened {
			p.opened = true
			o := base
			o.Kind = telemetry.ObsFrameOpened
			dst = append(dst, p.stamp(o))
		}
	case "assistant.message":
		if d.Model != "" {
			p.model = d.Model
		}
		p.answered = len(d.ToolRequests) == 0
	case "assistant.turn_end":
		if p.frame != "" && p.answered {
			dst = p.end(dst, base, "stop")
		}
	case "abort":
		if p.frame != "" {
			dst = p.end(dst, base, "aborted")
		}
	case "session.shutdown":
		if p.frame != "" {
			dst = p.end(dst, base, "shutdown")
		}
	case "session.usage_record":
		u := d.Usage
		if u == nil || u.InputTokens == nil {
			o := base
			o.Kind = telemetry.ObsUnreadable
			o.Detail = "a session.usage_record without usage.inputTokens"
			return append(dst, p.stamp(o)), nil
		}
		if u.Model != "" {
			p.model = u.Model
		}
		if u.MaxPromptTokens > 0 {
			p.window = u.MaxPromptTokens
		}
		o := base
		o.Kind = telemetry.ObsUsage
		o.Tokens = *u.InputTokens
		dst = append(dst, p.stamp(o))
	case "session.compaction_complete":
		if d.Success == nil || !*d.Success {
			return dst, nil
		}
		if d.TokenLimit > 0 {
			p.window = d.TokenLimit
		}
		o := base
		o.Kind = telemetry.ObsCompacted
		o.Trigger = "auto"
		if d.Trigger == "manual" {
			o.Trigger = "manual"
		}
		o.PreTokens, o.PostTokens, o.ID = d.PreCompactionTokens, d.PostCompactionTokens, d.CompactionAttemptID
		dst = append(dst, p.stamp(o))
	}
	return dst, nil
}

// read are the record types the parser reads.
var read = map[string]bool{
	"session.start": true, "session.resume": true, "user.message": true, "assistant.turn_start": true,
	"assistant.message": true, "assistant.turn_end": true, "abort": true, "session.shutdown": true,
	"session.usage_record": true, "session.compaction_complete": true,
}

// session reports the session id when it is new.
func (p *Parser) session(dst []telemetry.Observation, base telemetry.Observation, id, cwd string) []telemetry.Observation {
	if id == "" || id == p.sessionID {
		return dst
	}
	p.sessionID = id
	o := base
	o.Kind = telemetry.ObsHarnessSession
	o.Cwd = cwd
	return append(dst, p.stamp(o))
}

// end closes the open turn.
func (p *Parser) end(dst []telemetry.Observation, base telemetry.Observation, reason string) []telemetry.Observation {
	o := base
	o.Kind = telemetry.ObsFrameEnded
	o.Trigger = reason
	dst = append(dst, p.stamp(o))
	p.frame, p.opened, p.answered = "", false, false
	return dst
}

// stamp fills what every observation carries: the session, its version,
// the turn, the model and its window.
func (p *Parser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID, o.HarnessVersion, o.Model, o.Window = p.sessionID, p.version, p.model, p.window
	if o.FrameID == "" {
		o.FrameID = p.frame
	}
	return o
}

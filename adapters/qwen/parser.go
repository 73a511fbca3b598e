package qwen

import (
	"encoding/json"

	"github.com/lifeloop/lifeloop/telemetry"
)

// Parser reads Qwen Code chat files (append-only JSONL, measured with
// 0.24.4): one record per line, {uuid, parentUuid, sessionId, timestamp,
// type, cwd, version, ...}; type user, assistant, tool_result or system
// (with a subtype: ui_telemetry, attribution_snapshot, chat_compression
// …). Messages are Gemini-style {role, parts}; an assistant record carries
// the call's usageMetadata and the model's contextWindowSize.
//
// Rules:
//   - The first record's sessionId: ObsHarnessSession (with its cwd and
//     version); again when it changes.
//   - A user record with a text part (a prompt) opens a turn:
//     ObsFrameOpening, FrameID = "<session id>#<record uuid>" (FrameID).
//     A prompt while a turn is open ends it first (Trigger
//     "interrupted"). tool_result records are mid-turn.
//   - The turn's first assistant record: ObsFrameOpened (Model = its
//     model).
//   - An assistant record with usageMetadata: ObsUsage, Tokens =
//     promptTokenCount (the prompt of that call: the context in use, as
//     Qwen Code's own context indicator counts it), Window =
//     contextWindowSize.
//   - An assistant record without a functionCall part ends the turn:
//     ObsFrameEnded, Trigger "stop".
//   - A system chat_compression record (/compress, or the CLI's own at
//     its threshold): ObsCompacted, Trigger "manual" (/compress) or "auto", PreTokens and
//     PostTokens its info.originalTokenCount and info.newTokenCount.
type Parser struct {
	sessionID string
	version   string
	model     string
	frame     string
	opened    bool
	window    int64
}

// NewParser returns a parser for one chat file.
func NewParser() *Parser { return &Parser{} }

// SourceKind implements telemetry.Parser.
func (p *Parser) SourceKind() telemetry.SourceKind { return SourceChat }

// FrameID is the frame id of the turn the prompt record uuid opened in
// session sessionID: "<sessionID>#<uuid>".
func FrameID(sessionID, uuid string) string { return sessionID + "#" + uuid }

// record is the part of a chat file line the parser reads.
type record struct {
	UUID      string `json:"uuid"`
	SessionID string `json:"sessionId"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	Cwd       string `json:"cwd"`
	Version   string `json:"version"`
	Model     string `json:"model"`
	Message   *struct {
		Parts []struct {
			Text         *string         `json:"text"`
			FunctionCall json.RawMessage `json:"functionCall"`
		} `json:"parts"`
	} `json:"message"`
	Usage *struct {
		PromptTokenCount *int64 `json:"promptTokenCount"`
	} `json:"usageMetadata"`
	ContextWindowSize int64 `json:"contextWindowSize"`
	SystemPayload     *struct {
		Info *struct {
			OriginalTokenCount int64  `json:"originalTokenCount"`
			NewTokenCount      int64  `json:"newTokenCount"`
			TriggerReason      string `json:"triggerReason"`
		} `json:"info"`
	} `json:"systemPayload"`
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
	base := telemetry.Observation{Source: src, At: telemetry.ParseTime(r.Timestamp)}
	if r.Version != "" {
		p.version = r.Version
	}
	if r.SessionID != "" && r.SessionID != p.sessionID {
		p.sessionID = r.SessionID
		o := base
		o.Kind = telemetry.ObsHarnessSession
		o.Cwd = r.Cwd
		dst = append(dst, p.stamp(o))
	}
	switch r.Type {
	case "user":
		if !r.hasText() {
			return dst, nil
		}
		if p.frame != "" {
			dst = p.end(dst, base, "interrupted")
		}
		p.frame, p.opened = FrameID(p.sessionID, r.UUID), false
		o := base
		o.Kind = telemetry.ObsFrameOpening
		dst = append(dst, p.stamp(o))
	case "assistant":
		if r.Model != "" {
			p.model = r.Model
		}
		if r.ContextWindowSize > 0 {
			p.window = r.ContextWindowSize
		}
		if p.frame != "" && !p.opened {
			p.opened = true
			o := base
			o.Kind = telemetry.ObsFrameOpened
			dst = append(dst, p.stamp(o))
		}
		if r.Usage != nil && r.Usage.PromptTokenCount != nil {
			o := base
			o.Kind = telemetry.ObsUsage
			o.Tokens = *r.Usage.PromptTokenCount
			dst = append(dst, p.stamp(o))
		}
		if p.frame != "" && !r.callsTool() {
			dst = p.end(dst, base, "stop")
		}
	case "system":
		if r.Subtype != "chat_compression" || r.SystemPayload == nil || r.SystemPayload.Info == nil {
			return dst, nil
		}
		info := r.SystemPayload.Info
		o := base
		o.Kind = telemetry.ObsCompacted
		o.Trigger = "auto"
		if info.TriggerReason == "manual" {
			o.Trigger = "manual"
		}
		o.PreTokens, o.PostTokens = info.OriginalTokenCount, info.NewTokenCount
		dst = append(dst, p.stamp(o))
	}
	return dst, nil
}

// hasText reports whether a record's message has a text part.
func (r *record) hasText() bool {
	if r.Message == nil {
		return false
	}
	for _, part := range r.Message.Parts {
		if part.Text != nil {
			return true
		}
	}
	return false
}

// callsTool reports whether a record's message asks for a tool.
func (r *record) callsTool() bool {
	if r.Message == nil {
		return false
	}
	for _, part := range r.Message.Parts {
		if len(part.FunctionCall) > 0 && string(part.FunctionCall) != "null" {
			return true
		}
	}
	return false
}

// end closes the open turn.
func (p *Parser) end(dst []telemetry.Observation, base telemetry.Observation, reason string) []telemetry.Observation {
	o := base
	o.Kind = telemetry.ObsFrameEnded
	o.Trigger = reason
	dst = append(dst, p.stamp(o))
	p.frame, p.opened = "", false
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

// The transcript parser as it was before its fast path: the reference the
// differential tests compare the parser with, line by line.

package claude

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/telemetry"
)

// oldParser reads Claude Code transcript lines
// (<config>/projects/<cwd>/<session>.jsonl).
//
// Rules:
//   - sessionId: ObsHarnessSession when first seen or changed.
//   - A turn opens (ObsFrameOpening) on a real user prompt: a "user" line
//     that is not isMeta, not isCompactSummary, not
//     isVisibleInTranscriptOnly, not a local slash command (/exit: its
//     caveat, command and output lines) and whose content is not only
//     tool_result blocks. Assistant lines of the "<synthetic>" model (the
//     TUI's own, no model call) are ignored unless they are API errors.
//     The frame id is the line's promptId (shared by every line of the
//     turn), else its uuid.
//   - The first assistant line of the turn gives ObsFrameOpened.
//   - An assistant line whose stop_reason ends the turn (anything but
//     tool_use / pause_turn / empty) gives ObsFrameEnded with the stop
//     reason as Trigger; tool_use is mid-turn.
//   - isSidechain lines belong to a subcall frame whose ParentFrameID is
//     the open main turn; sidechain usage is not the main context and is
//     not reported.
//   - Usage per assistant line = input_tokens +
//     cache_creation_input_tokens + cache_read_input_tokens +
//     output_tokens, reported once per (oldMessage.id, requestId): the
//     harness writes one line per content block with the same usage.
//   - system/compact_boundary gives ObsCompacted with compactMetadata's
//     trigger, preTokens and postTokens.
//   - isApiErrorMessage lines give ObsAPIError (Trigger = the error code),
//     and end an open turn with Trigger "api_error".
type oldParser struct {
	cfg       windowConfig
	sessionID string
	version   string
	frame     string // open main frame, "" when none
	opened    bool   // ObsFrameOpened emitted for frame
	side      string // open sidechain frame
	early     *oldEarlyAnswer
	seen      map[oldUsageKey]struct{}
	seenOrder []oldUsageKey
}

type oldUsageKey struct{ msg, req string }

// oldEarlyAnswer is the answer of a turn whose prompt line is not written
// yet: Claude Code sometimes appends a turn's assistant line before the
// user line that opened it (measured with 2.1.197, the user line carrying
// the earlier timestamp). Its frame events wait for that line.
type oldEarlyAnswer struct {
	at    time.Time
	model string
	stop  string
	ended bool
}

// newOldParser returns a oldParser for Claude Code transcripts.
func newOldParser(cfg windowConfig) *oldParser {
	return &oldParser{cfg: cfg, seen: make(map[oldUsageKey]struct{})}
}

// SourceKind implements telemetry.Parser.
func (p *oldParser) SourceKind() telemetry.SourceKind { return telemetry.SourceTranscript }

// oldLine is the part of a transcript line the oldParser reads.
type oldLine struct {
	Type                      string          `json:"type"`
	Subtype                   string          `json:"subtype"`
	SessionID                 string          `json:"sessionId"`
	UUID                      string          `json:"uuid"`
	PromptID                  string          `json:"promptId"`
	AgentID                   string          `json:"agentId"`
	Timestamp                 string          `json:"timestamp"`
	RequestID                 string          `json:"requestId"`
	Version                   string          `json:"version"`
	IsSidechain               bool            `json:"isSidechain"`
	IsMeta                    bool            `json:"isMeta"`
	IsCompactSummary          bool            `json:"isCompactSummary"`
	IsVisibleInTranscriptOnly bool            `json:"isVisibleInTranscriptOnly"`
	IsAPIErrorMessage         bool            `json:"isApiErrorMessage"`
	Error                     json.RawMessage `json:"error"`
	Message                   *oldMessage     `json:"message"`
	CompactMetadata           *struct {
		Trigger    string `json:"trigger"`
		PreTokens  int64  `json:"preTokens"`
		PostTokens int64  `json:"postTokens"`
	} `json:"compactMetadata"`
}

type oldMessage struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	StopReason string          `json:"stop_reason"`
	Content    json.RawMessage `json:"content"`
	Usage      json.RawMessage `json:"usage"`
}

// oldUsage decodes message.usage: nil when it is absent, null or not an
// object of numbers; read reports whether it names input_tokens or
// output_tokens.
func oldUsage(raw json.RawMessage) (u *usage, read bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	var v usage
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil || json.Unmarshal(raw, &keys) != nil {
		return nil, false
	}
	for k := range keys {
		if strings.EqualFold(k, "input_tokens") || strings.EqualFold(k, "output_tokens") {
			read = true
		}
	}
	return &v, read
}

// Parse implements telemetry.Parser.
func (p *oldParser) Parse(dst []telemetry.Observation, data []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	var l oldLine
	if err := json.Unmarshal(data, &l); err != nil {
		return dst, err
	}
	if l.Type == "" {
		return dst, telemetry.ErrNotObject
	}
	at := telemetry.ParseTime(l.Timestamp)
	base := telemetry.Observation{Source: src, At: at}
	if l.Version != "" {
		p.version = l.Version
	}
	if l.SessionID != "" && l.SessionID != p.sessionID {
		p.sessionID = l.SessionID
		o := base
		o.Kind = telemetry.ObsHarnessSession
		dst = append(dst, p.stamp(o))
	}
	switch l.Type {
	case "user":
		dst = p.user(dst, &l, base)
	case "assistant":
		dst = p.assistant(dst, &l, base)
	case "system":
		if l.Subtype == "compact_boundary" && l.CompactMetadata != nil {
			o := base
			o.Kind = telemetry.ObsCompacted
			o.Trigger = l.CompactMetadata.Trigger
			o.PreTokens = l.CompactMetadata.PreTokens
			o.PostTokens = l.CompactMetadata.PostTokens
			o.FrameID = p.frame
			dst = append(dst, p.stamp(o))
		}
	}
	return dst, nil
}

func (p *oldParser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
	o.HarnessVersion = p.version
	return o
}

func (p *oldParser) user(dst []telemetry.Observation, l *oldLine, base telemetry.Observation) []telemetry.Observation {
	if l.IsMeta || l.IsCompactSummary || l.IsVisibleInTranscriptOnly || l.Message == nil || !oldIsPrompt(l.Message.Content) || oldIsLocalCommand(l.Message.Content) {
		return dst
	}
	id := l.PromptID
	if id == "" {
		id = l.UUID
	}
	o := base
	o.Kind = telemetry.ObsFrameOpening
	if l.IsSidechain {
		if l.AgentID != "" {
			id = l.AgentID
		}
		if p.side == id {
			return dst
		}
		p.side = id
		o.FrameID = id
		o.ParentFrameID = p.frame
		return append(dst, p.stamp(o))
	}
	if p.frame == id {
		return dst // a queued second prompt line of the same turn
	}
	p.frame, p.opened = id, false
	o.FrameID = id
	dst = append(dst, p.stamp(o))
	if e := p.early; e != nil {
		p.early = nil
		if !e.at.IsZero() && !base.At.IsZero() && !e.at.Before(base.At) {
			// The answer written before this prompt line belongs to it.
			p.opened = true
			op := base
			op.Kind, op.FrameID, op.Model = telemetry.ObsFrameOpened, id, e.model
			dst = append(dst, p.stamp(op))
			if e.ended {
				base.Model = e.model
				dst = p.endFrame(dst, base, e.stop)
			}
		}
	}
	return dst
}

// oldIsPrompt reports whether a user oldMessage's content is a prompt (a string,
// or blocks of which at least one is not a tool_result).
func oldIsPrompt(content json.RawMessage) bool {
	c := bytes.TrimSpace(content)
	if len(c) == 0 {
		return false
	}
	if c[0] == '"' {
		return true
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(c, &blocks) != nil {
		return false
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			return true
		}
	}
	return false
}

// oldIsLocalCommand reports whether a user line records a slash command the
// TUI ran itself (/exit, /clear, ...): its caveat, the command and its
// output, none of which reaches the model.
func oldIsLocalCommand(content json.RawMessage) bool {
	var text string
	if json.Unmarshal(content, &text) != nil {
		return false
	}
	for _, tag := range []string{"<local-command-caveat>", "<command-name>", "<local-command-stdout>", "<local-command-stderr>"} {
		if strings.HasPrefix(text, tag) {
			return true
		}
	}
	return false
}

// syntheticModel is the model of assistant lines the TUI writes
// itself (e.g. after a local command): no model call, no usage.

func oldTurnEnds(stop string) bool {
	switch stop {
	case "", "tool_use", "pause_turn":
		return false
	}
	return true
}

func (p *oldParser) assistant(dst []telemetry.Observation, l *oldLine, base telemetry.Observation) []telemetry.Observation {
	m := l.Message
	if m == nil {
		return dst
	}
	if m.Model == syntheticModel && !l.IsAPIErrorMessage {
		return dst
	}
	base.Model = m.Model
	if l.IsSidechain {
		if p.side != "" && oldTurnEnds(m.StopReason) {
			o := base
			o.Kind = telemetry.ObsFrameEnded
			o.FrameID, o.ParentFrameID, o.Trigger = p.side, p.frame, m.StopReason
			p.side = ""
			dst = append(dst, p.stamp(o))
		}
		return dst
	}
	if p.frame == "" && !l.IsAPIErrorMessage {
		// No turn is open: the prompt line may follow (see oldEarlyAnswer).
		if p.early == nil {
			p.early = &oldEarlyAnswer{at: base.At, model: m.Model}
		}
		p.early.stop = m.StopReason
		p.early.ended = p.early.ended || oldTurnEnds(m.StopReason)
	}
	if p.frame != "" && !p.opened {
		p.opened = true
		o := base
		o.Kind = telemetry.ObsFrameOpened
		o.FrameID = p.frame
		dst = append(dst, p.stamp(o))
	}
	if l.IsAPIErrorMessage {
		o := base
		o.Kind = telemetry.ObsAPIError
		o.FrameID = p.frame
		o.Trigger = oldErrorCode(l.Error)
		dst = append(dst, p.stamp(o))
		return p.endFrame(dst, base, "api_error")
	}
	u, read := oldUsage(m.Usage)
	if !read {
		o := base
		o.Model = ""
		o.Kind = telemetry.ObsUnreadable
		o.FrameID = p.frame
		o.Detail = "an assistant line without a readable message.usage (input_tokens, output_tokens)"
		dst = append(dst, p.stamp(o))
	}
	if u != nil && p.firstUsage(oldUsageKey{m.ID, l.RequestID}) {
		o := base
		o.Kind = telemetry.ObsUsage
		o.FrameID = p.frame
		o.Tokens = u.Input + u.CacheCreation + u.CacheRead + u.Output
		o.Window = p.cfg.window(m.Model)
		dst = append(dst, p.stamp(o))
	}
	if oldTurnEnds(m.StopReason) {
		dst = p.endFrame(dst, base, m.StopReason)
	}
	return dst
}

func (p *oldParser) endFrame(dst []telemetry.Observation, base telemetry.Observation, reason string) []telemetry.Observation {
	if p.frame == "" {
		return dst
	}
	o := base
	o.Kind = telemetry.ObsFrameEnded
	o.FrameID = p.frame
	o.Trigger = reason
	p.frame, p.opened = "", false
	return append(dst, p.stamp(o))
}

// firstUsage records k and reports whether it was new. Lines without a
// oldMessage id are always new. Memory is bounded: the oldest keys are
// forgotten after maxSeenUsage (repeats are adjacent in practice).
func (p *oldParser) firstUsage(k oldUsageKey) bool {
	if k.msg == "" {
		return true
	}
	if _, ok := p.seen[k]; ok {
		return false
	}
	p.seen[k] = struct{}{}
	p.seenOrder = append(p.seenOrder, k)
	if len(p.seenOrder) > maxSeenUsage {
		delete(p.seen, p.seenOrder[0])
		p.seenOrder = p.seenOrder[1:]
	}
	return true
}

func oldErrorCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Type != "" {
		return obj.Type
	}
	return "unknown"
}
